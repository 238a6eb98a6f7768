import { join } from 'node:path';

/**
 * The environment a bench signs in: its own config and sandbox under `out`, no colour, CI (no
 * prompts), and the sandbox organization's PIN-only bulk seal (client credentials), so that no
 * approval page is in the measured time.
 */
export function sealEnv(out) {
  return {
    ...process.env,
    ESIGN_CONFIG_DIR: join(out, 'config'),
    ESIGN_SANDBOX_DIR: join(out, 'sandbox'),
    NO_COLOR: '1',
    CI: 'true',
    ESIGN_SERVICE_AUTH: 'client-credentials',
    ESIGN_CREDENTIAL_PIN: '246810',
  };
}
