/** The settings key of the desktop clients' default split tunnel (a list of CIDRs; absent = the VPN subnet only). */
export const SPLIT_TUNNEL_SETTING = 'client.split_tunnel';
