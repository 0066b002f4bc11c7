// The gateway's set-up: its gateway.env shown once (copy, download) right after tokens are issued
// (gateway created, tokens rotated), and the copy-paste install of the companion on the gateway
// machine (docker, podman or systemd), with the env file written from that content; later, on the
// gateway's page, the same install without the secret.
import { useState } from 'preact/hooks';
import { SecretOnce } from '../../components/secret';
import { CopyButton } from '../../components/ui';
import { t } from '../../i18n';
import { INSTALL_KINDS, installScript, type InstallKind } from './install';
import './gateways.css';

/** `inCard`: inside a card that carries the title already. */
export function GatewayInstall(props: { envContent?: string; idPrefix: string; inCard?: boolean }) {
  const [kind, setKind] = useState<InstallKind>('docker');
  const script = installScript(kind, props.envContent);
  const id = (x: string) => `${props.idPrefix}-${x}`;
  return (
    <section class="gw-install" aria-labelledby={props.inCard ? undefined : id('title')} data-testid="gw-install">
      {!props.inCard && <h3 id={id('title')}>{t('gateways.installTitle')}</h3>}
      <p class="muted">{props.envContent === undefined ? t('gateways.installLater') : t('gateways.installText')}</p>
      <fieldset class="gw-install-kind">
        <legend>{t('gateways.installWith')}</legend>
        {INSTALL_KINDS.map((k) => (
          <label key={k} class="check">
            <input type="radio" name={id('kind')} value={k} checked={kind === k} onChange={() => setKind(k)} />
            {t(`gateways.install_${k}`)}
          </label>
        ))}
      </fieldset>
      <p class="small muted">{t(`gateways.installHint_${kind}`)}</p>
      <pre class="gw-install-script" tabIndex={0} data-testid="gw-install-script" aria-label={t(`gateways.install_${kind}`)}>
        {script}
      </pre>
      <div class="form-actions">
        <CopyButton text={script} label={t('gateways.copyInstall')} />
      </div>
    </section>
  );
}

/** What a dialog shows once a gateway's tokens were issued: the gateway.env (copy, download) and the install with it. */
export function GatewaySetup(props: { envContent: string }) {
  return (
    <div class="gw-env">
      <p class="banner warn" role="note">
        {t('gateways.showOnce')}
      </p>
      <SecretOnce
        id="gw-env"
        label={t('gateways.envFile')}
        value={props.envContent}
        filename="gateway.env"
        multiline
        valueClass="gw-env-text"
        copyLabel={t('gateways.copyEnv')}
      />
      <GatewayInstall envContent={props.envContent} idPrefix="gw-install-new" />
    </div>
  );
}
