import { readFileSync, rmSync } from 'node:fs';
import { EsignError } from '../../core/errors.js';
import type { Command } from 'commander';
import { sandboxDataDir } from '../../io/paths.js';
import { writeRootPem, writeRuntime } from '../context.js';
import { exitHooks } from '../exit-hooks.js';
import { positiveNumber, type CommandModule } from '../command.js';

export const DEFAULT_SANDBOX_PORT = 8799;

interface StartOptions {
  port: number;
  dataDir?: string;
  tls?: boolean;
  quirk: string[];
  trustLists?: number;
}

export const defineCommand: CommandModule['defineCommand'] = (program: Command, run) => {
  const sandbox = program
    .command('sandbox')
    .summary('run the local emulators of all services (test signatures)')
    .description(
      'Local emulators of the signing, identity, storage and timestamping services, with their own TEST PKI. ' +
        'The signing service speaks CSC API v1.0.4 under /signing and v2 under /signing-v2. ' +
        'The "sandbox" profile (v1.0.4) and the "sandbox-v2" profile (v2) use a running `esign sandbox start` when there is one, ' +
        'and otherwise start the same emulators inside each command.',
    );
  sandbox
    .command('start')
    .description('serve the emulators on 127.0.0.1 until Ctrl-C')
    .option(
      '--port <n>',
      'port on 127.0.0.1 (0 picks a free one)',
      (text) => (text === '0' ? 0 : positiveNumber(text)),
      DEFAULT_SANDBOX_PORT,
    )
    .option(
      '--data-dir <dir>',
      'where the TEST PKI and state live (default: the platform data dir, or ESIGN_SANDBOX_DIR); ' +
        'the sandbox profiles use a sandbox started with another data dir only when ESIGN_SANDBOX_DIR names it',
    )
    .option(
      '--tls',
      'serve over HTTPS, with a certificate for localhost and 127.0.0.1 from the sandbox root (trust it with ESIGN_CA_FILE; the sandbox profiles do)',
    )
    .option(
      '--trust-lists <n>',
      "publish N TEST national lists under /trust (ZZ, then XA, XB, … of a real list's size), for benchmarks",
      (text) => positiveNumber(text),
    )
    .option(
      '--quirk <name>',
      'make the signing service behave as a real provider does (repeatable; `--quirk list` names them)',
      (name: string, names: string[]) => [...names, name],
      [] as string[],
    )
    .action(async (options: StartOptions, command: Command) =>
      run(command, async (ctx) => {
        const { QUIRKS, isQuirkName } = await import('../../sandbox/signing/quirks.js');
        if (options.quirk.includes('list')) {
          const entries = Object.entries(QUIRKS).map(([name, quirk]) => ({
            name,
            description: quirk.description,
            source: quirk.source,
          }));
          ctx.io.result({ quirks: entries }, () =>
            entries
              .map((quirk) => `${quirk.name.padEnd(20)} ${quirk.description}\n${' '.repeat(21)}source: ${quirk.source}`)
              .join('\n'),
          );
          return;
        }
        const unknown = options.quirk.filter((name) => !isQuirkName(name));
        if (unknown.length > 0) {
          throw new EsignError('USAGE', `Unknown sandbox quirk ${unknown.join(', ')}.`, {
            hint: `Known quirks: ${Object.keys(QUIRKS).join(', ')} (esign sandbox start --quirk list).`,
          });
        }
        const quirks = options.quirk.filter(isQuirkName);
        const dataDir = options.dataDir ?? sandboxDataDir(ctx.env);
        const { startSandbox } = await import('../../sandbox/index.js');
        const started = await startSandbox({
          dataDir,
          port: options.port,
          autoApprove: ctx.globals.autoApprove ?? false,
          quirks,
          log: (line) => ctx.io.error(line),
          tls: options.tls ?? false,
          ...(options.trustLists ? { trustLists: Math.floor(options.trustLists) } : {}),
        });
        const { SANDBOX_SEAL } = await import('../../sandbox/deps.js');
        const seal = { ...SANDBOX_SEAL };
        const rootPemPath = await writeRootPem(dataDir, started.pki.rootPem);
        // Announced in its own data dir only: the sandbox profile uses the sandbox of its data dir
        // (ESIGN_SANDBOX_DIR), so one started with another --data-dir never takes the default's place.
        const runtimeFile = await writeRuntime(dataDir, {
          pid: process.pid,
          urls: started.urls,
          rootPemPath,
          lotlSignerCertificate: started.lotlSignerCertificate,
          autoApprove: started.autoApprove,
        });
        exitHooks.add(() => removeOwnRuntime(runtimeFile));
        const urls = started.urls;
        const tls = options.tls ? { caFile: rootPemPath } : undefined;
        ctx.io.result(
          {
            urls,
            dataDir,
            rootPem: rootPemPath,
            lotl: { url: urls.lotl, signerCertificate: started.lotlSignerCertificate },
            ...(tls ? { tls } : {}),
            autoApprove: started.autoApprove,
            quirks,
            seal,
          },
          () =>
            [
              ctx.io.bold('esign sandbox') + ' — TEST services, TEST signatures (no legal effect)',
              `  signing           ${urls.signing}   (CSC API v1.0.4)`,
              `  signing, CSC v2   ${urls.signingV2}   (--profile sandbox-v2)`,
              `  identity          ${urls.identity}`,
              `  identity (legacy) ${urls.identityLegacy}`,
              `  storage           ${urls.storage}`,
              `  timestamping      ${urls.tsaEndpoint}`,
              `  S3                ${urls.s3 ?? '(not started)'}`,
              `  PKI (CRL, OCSP)   ${urls.pki}`,
              `  trust anchor      ${rootPemPath}`,
              `  TEST trusted lists ${urls.lotl} (LOTL; national list ZZ; esign trust update)`,
              ...(tls
                ? [
                    `  TLS               HTTPS with a server certificate from that root; other clients: ESIGN_CA_FILE=${rootPemPath}`,
                  ]
                : []),
              `  data              ${dataDir}`,
              `  approval          ${started.autoApprove ? 'automatic (--auto-approve)' : 'in the browser'}`,
              `  quirks            ${quirks.length > 0 ? quirks.join(', ') : 'none (the CSC specification to the letter)'}`,
              `  organization seals (no browser): client ${seal.clientId}, login user ${seal.username}; credentials`,
              `                    ${seal.credentialID} (PIN + TOTP), ${seal.onlineOtpCredentialID} (PIN + OTP by "SMS": ${urls.signing}/otp),`,
              `                    ${seal.pinOnlyCredentialID} (PIN only, bulk); the secrets are in --json (seal)`,
              '',
              'The "sandbox" and "sandbox-v2" profiles now use these services. Press Ctrl-C to stop.',
            ].join('\n'),
        );
        await new Promise<void>((resolve) => {
          const stop = () => resolve();
          process.once('SIGINT', stop);
          process.once('SIGTERM', stop);
        });
        await started.close();
      }),
    );
};

/** Removes runtime.json only while it still announces this process: another sandbox may have replaced it. */
function removeOwnRuntime(path: string): void {
  try {
    if ((JSON.parse(readFileSync(path, 'utf8')) as { pid?: number }).pid === process.pid) rmSync(path, { force: true });
  } catch {
    // Gone already, or not ours to judge.
  }
}
