// The commands that install the gateway companion on the gateway machine, as gateway/README.md
// ("Install") and gateway/Dockerfile describe them: the image built from a Gatehouse checkout and run
// with host networking, NET_ADMIN and /dev/net/tun, or the one-file bundle under systemd. There is no
// published image or package: both start in a checkout of the version the server runs.
// sidecar/ui/test/gateway-install.test.ts keeps them equal to the documented ones.

export type InstallKind = 'docker' | 'podman' | 'systemd';
export const INSTALL_KINDS: InstallKind[] = ['docker', 'podman', 'systemd'];

export const ENV_PATH = '/etc/gatehouse/gateway.env';
const HEREDOC = 'GATEHOUSE_GATEWAY_ENV';

/**
 * How the env file gets to ENV_PATH: with its content (right after the tokens were issued) a
 * here-document that writes it readable by root only; without (later, the secret is not shown
 * again) from the gateway.env saved then.
 */
export function envStep(envContent?: string): string[] {
  if (envContent === undefined)
    return ['# the gateway.env saved when the tokens were issued (lost? Rotate tokens: a new one)', `install -D -m 0600 gateway.env ${ENV_PATH}`];
  const body = envContent.endsWith('\n') ? envContent.slice(0, -1) : envContent;
  return [
    '# the gateway.env shown above, readable by root only',
    'install -d -m 0700 /etc/gatehouse',
    `(umask 077 && cat > ${ENV_PATH}) <<'${HEREDOC}'`,
    body,
    HEREDOC,
  ];
}

/** The docker/podman run of gateway/Dockerfile's header and gateway/README.md (the same options with either). */
export const runCommand = (engine: 'docker' | 'podman') =>
  [
    `${engine} run -d --name gatehouse-gateway --restart unless-stopped \\`,
    '  --network host --cap-add NET_ADMIN --device /dev/net/tun \\',
    `  -v ${ENV_PATH}:/config/gateway.env:ro -v gatehouse-gateway:/data \\`,
    '  gatehouse-gateway',
  ].join('\n');

/** The systemd unit of gateway/README.md, with its state directory made by systemd. */
export const SYSTEMD_UNIT = [
  '[Unit]',
  'Description=Gatehouse gateway companion',
  'After=network-online.target',
  'Wants=network-online.target',
  '',
  '[Service]',
  `ExecStart=/usr/bin/node /opt/gatehouse-gateway/dist/gatehouse-gateway.mjs --env ${ENV_PATH}`,
  'Environment=GATEWAY_STATE_FILE=/var/lib/gatehouse-gateway/state.json',
  'Environment=WG_I_PREFER_BUGGY_USERSPACE_TO_POLISHED_KMOD=1',
  'StateDirectory=gatehouse-gateway',
  'Restart=always',
  'RestartSec=5',
  '',
  '[Install]',
  'WantedBy=multi-user.target',
].join('\n');

/** The whole copy-paste script of one kind, run as root on the gateway machine in a Gatehouse checkout. */
export function installScript(kind: InstallKind, envContent?: string): string {
  const head = '# on the gateway machine, as root, in a checkout of Gatehouse (the version this server runs)';
  if (kind !== 'systemd')
    return [
      head,
      ...envStep(envContent),
      '# the companion image (gateway/Dockerfile)',
      `${kind} build -f gateway/Dockerfile -t gatehouse-gateway .`,
      '# host network: the LAN and Wake-on-LAN; NET_ADMIN and /dev/net/tun: the WireGuard tunnel',
      runCommand(kind),
      `${kind} logs -f gatehouse-gateway`,
    ].join('\n');
  return [
    head,
    'apt-get install -y nodejs npm wireguard-tools wireguard-go iproute2 iputils-ping',
    '# the companion as one file (an esbuild bundle), installed to /opt/gatehouse-gateway',
    'npm ci --workspace gateway --include-workspace-root --ignore-scripts --no-audit --no-fund',
    'npm run -w gateway bundle',
    'install -D -m 0644 gateway/dist/gatehouse-gateway.mjs /opt/gatehouse-gateway/dist/gatehouse-gateway.mjs',
    'install -D -m 0644 gateway/package.json /opt/gatehouse-gateway/package.json',
    ...envStep(envContent),
    "cat > /etc/systemd/system/gatehouse-gateway.service <<'UNIT'",
    SYSTEMD_UNIT,
    'UNIT',
    'systemctl daemon-reload && systemctl enable --now gatehouse-gateway',
    'journalctl -fu gatehouse-gateway',
  ].join('\n');
}
