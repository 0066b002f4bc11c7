// The vendor's licence-signing public key, shipped with the product: a licence key signed with the
// matching private key (kept by the vendor, never in this repository) verifies offline on every
// install. GATEHOUSE_LICENCE_PUBLIC_KEY adds another trusted key (tests, self-signed deployments).
export const VENDOR_PUBLIC_KEY_PEM = `-----BEGIN PUBLIC KEY-----
MCowBQYDK2VwAyEAHc+MFldl+jl8qNwxv0o2o7KqSd2kZ1IwWPpx/cTPK+w=
-----END PUBLIC KEY-----
`;
