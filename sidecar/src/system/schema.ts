// Schema pieces of the system endpoints, without imports so that request and response schemas (and
// browsers) can use them.

/** Why a host cannot be reached from the internet, judged by its form (system/public-host.ts). */
export const PUBLIC_HOST_PROBLEMS = [
  'empty',
  'single_label',
  'local_suffix',
  'invalid_name',
  'loopback_ip',
  'private_ip',
  'link_local_ip',
  'not_global_ip',
] as const;
export type PublicHostProblem = (typeof PUBLIC_HOST_PROBLEMS)[number];
