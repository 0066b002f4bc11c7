// The bounds of the uptime monitor's interval (PUT /settings/monitoring), without imports so that
// request schemas (and browsers) can use them.
export const MIN_MONITOR_INTERVAL_S = 5;
export const MAX_MONITOR_INTERVAL_S = 3600;
