// A cluster node's name (GATEHOUSE_NODE_NAME, DELETE /api/v1/cluster/nodes/:name): 1–63 letters,
// digits, dots, dashes or underscores, starting with a letter or digit. Its own module, free of
// Node-only imports, so the request schemas (and the browser) check a name the way the
// configuration does.
export const NODE_NAME_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._-]{0,62}$/;
