import { X509Certificate, createHash } from 'node:crypto';
import type { Command } from 'commander';
import { EsignError } from '../../core/errors.js';
import type { CredentialInfo } from '../../core/csc/shapes.js';
import type { SpokenProtocol } from '../../io/csc-client.js';
import type { Context } from '../context.js';
import { table } from '../io.js';
import type { CommandModule } from '../command.js';
import { createCscClient } from '../service-clients.js';

export const defineCommand: CommandModule['defineCommand'] = (program: Command, run) => {
  const credentials = program
    .command('credentials')
    .summary('list and choose signing credentials')
    .description('List the signing credentials of the signer, show one, or make one the profile default.\nThe first call opens the browser to sign in to the signing service; the token is kept for an hour.');

  credentials
    .command('list')
    .description('list your credentials: status, subject, issuer, validity, key')
    .action((_options: unknown, command: Command) => run(command, (ctx) => runList(ctx)));

  credentials
    .command('info <credentialID>')
    .description('show a credential: its certificate chain, key usage and status')
    .action((id: string, _options: unknown, command: Command) => run(command, (ctx) => runInfo(ctx, id)));

  credentials
    .command('use <credentialID>')
    .description("make a credential the profile's default for signing")
    .action((id: string, _options: unknown, command: Command) => run(command, (ctx) => runUse(ctx, id)));
};

export interface CertificateSummary {
  subject: string;
  subjectCN: string;
  issuer: string;
  issuerCN: string;
  serialNumber: string;
  validFrom: string;
  validTo: string;
  sha256Fingerprint: string;
}

export interface CredentialSummary {
  credentialID: string;
  status: 'enabled' | 'disabled';
  statusReason?: 'certificate expired' | 'certificate revoked' | 'certificate not yet valid';
  keyAlgorithm: string;
  keyLength: number;
  isDefault: boolean;
  signer: CertificateSummary;
}

/** rsaEncryption, and the RSA signature algorithms a CSC v2 key/algo may list instead (PKCS#1 v1.5 and PSS with SHA-256). */
const RSA_OIDS = ['1.2.840.113549.1.1.1', '1.2.840.113549.1.1.11', '1.2.840.113549.1.1.10'];

export function describeCertificate(der: Uint8Array): CertificateSummary {
  const certificate = new X509Certificate(der);
  return {
    subject: certificate.subject.split('\n').join(', '),
    subjectCN: commonName(certificate.subject),
    issuer: certificate.issuer.split('\n').join(', '),
    issuerCN: commonName(certificate.issuer),
    serialNumber: certificate.serialNumber.toLowerCase(),
    validFrom: new Date(certificate.validFrom).toISOString(),
    validTo: new Date(certificate.validTo).toISOString(),
    sha256Fingerprint: createHash('sha256').update(der).digest('hex'),
  };
}

function commonName(distinguishedName: string): string {
  const line = distinguishedName.split('\n').find((part) => part.startsWith('CN='));
  return line ? line.slice(3) : distinguishedName;
}

/** Status with a reason where the certificate itself tells it (CSC gives no reason field). */
export function summarize(info: CredentialInfo, now: Date, defaultId: string | undefined): CredentialSummary {
  const signerDer = info.certificates[0];
  if (!signerDer) throw new EsignError('CSC_BAD_RESPONSE', `The signing service gave no certificate for ${info.credentialID}.`);
  const signer = describeCertificate(signerDer);
  const summary: CredentialSummary = {
    credentialID: info.credentialID,
    status: info.status,
    keyAlgorithm: info.algorithms.some((algorithm) => RSA_OIDS.includes(algorithm)) ? 'RSA' : (info.algorithms[0] ?? 'unknown'),
    keyLength: info.keyLengthBits,
    isDefault: info.credentialID === defaultId,
    signer,
  };
  if (info.status === 'disabled') {
    if (info.certificateStatus === 'revoked') summary.statusReason = 'certificate revoked';
    else if (info.certificateStatus === 'expired' || Date.parse(signer.validTo) < now.getTime()) summary.statusReason = 'certificate expired';
    else if (Date.parse(signer.validFrom) > now.getTime()) summary.statusReason = 'certificate not yet valid';
  }
  return summary;
}

function statusText(summary: CredentialSummary): string {
  return summary.statusReason ? `${summary.status} (${summary.statusReason})` : summary.status;
}

async function runList(ctx: Context): Promise<void> {
  const profile = await ctx.profile();
  const client = await createCscClient(ctx);
  const infos = await client.listCredentials();
  const signingService = spokenSummary(await client.protocol());
  const summaries = infos.map((info) => summarize(info, ctx.clock.now(), profile.settings.credential));
  ctx.io.result({ profile: profile.name, signingService, credentials: summaries }, () => {
    if (summaries.length === 0) return 'No credentials: the signing service lists none for this signer.';
    const rows = summaries.map((s) => [
      `${s.isDefault ? '* ' : '  '}${s.credentialID}`,
      statusText(s),
      s.signer.subjectCN,
      s.signer.issuerCN,
      s.signer.validTo.slice(0, 10),
      `${s.keyAlgorithm} ${s.keyLength}`,
    ]);
    return table(['  id', 'status', 'subject', 'issuer', 'valid until', 'key'], rows) + (summaries.some((s) => s.isDefault) ? '\n(* default of this profile)' : '');
  });
}

async function runInfo(ctx: Context, credentialID: string): Promise<void> {
  const profile = await ctx.profile();
  const client = await createCscClient(ctx);
  const info = await client.credentialInfo(credentialID);
  const summary = summarize(info, ctx.clock.now(), profile.settings.credential);
  const chain = info.certificates.map(describeCertificate);
  const keyUsage = await keyUsageOf(info.certificates[0] as Uint8Array);
  const signingService = spokenSummary(await client.protocol());
  const result = { ...summary, algorithms: info.algorithms, authMode: info.authMode, keyUsage, chain, certificates: info.certificates.map((der) => Buffer.from(der).toString('base64')), signingService };
  ctx.io.result(result, () =>
    [
      `credential   ${summary.credentialID}${summary.isDefault ? ' (default)' : ''}`,
      `service      ${spokenText(signingService)}`,
      `status       ${statusText(summary)}`,
      `key          ${summary.keyAlgorithm} ${summary.keyLength} bits (${info.algorithms.join(', ')}), authMode ${info.authMode}`,
      `key usage    ${keyUsage.length > 0 ? keyUsage.join(', ') : '(not stated)'}`,
      'chain:',
      ...chain.flatMap((cert, index) => [
        `  ${index}  ${cert.subject}`,
        `     issuer  ${cert.issuer}`,
        `     serial  ${cert.serialNumber}   valid ${cert.validFrom.slice(0, 10)} → ${cert.validTo.slice(0, 10)}`,
        `     sha256  ${cert.sha256Fingerprint}`,
      ]),
    ].join('\n'),
  );
}

/** Which CSC API esign speaks with the service, and how it knows (`cscVersion` setting or the service's info). */
function spokenSummary(spoken: SpokenProtocol): { cscVersion: '1' | '2'; specs?: string; chosenBy: 'setting' | 'info' } {
  return { cscVersion: spoken.version, ...(spoken.specs ? { specs: spoken.specs } : {}), chosenBy: spoken.chosenBy };
}

function spokenText(spoken: ReturnType<typeof spokenSummary>): string {
  const name = spoken.cscVersion === '2' ? 'CSC API v2' : 'CSC API v1.0.4';
  const said = spoken.chosenBy === 'setting' ? 'the cscVersion setting' : "the service's info";
  return `${name}${spoken.specs ? ` (specs ${spoken.specs})` : ''}, chosen by ${said}`;
}

async function runUse(ctx: Context, credentialID: string): Promise<void> {
  const profile = await ctx.profile();
  const client = await createCscClient(ctx);
  const info = await client.credentialInfo(credentialID);
  if (info.status !== 'enabled') {
    const summary = summarize(info, ctx.clock.now(), undefined);
    throw new EsignError('CREDENTIAL_DISABLED', `The credential ${credentialID} is ${statusText(summary)} and cannot sign.`, {
      hint: 'Pick an enabled one from `esign credentials list`.',
      details: { credentialID },
    });
  }
  (await ctx.config()).set(profile.name, 'credential', credentialID);
  ctx.io.result({ profile: profile.name, credential: credentialID }, () => `${profile.name}: default credential is now ${credentialID}`);
}

const KEY_USAGE_NAMES = ['digitalSignature', 'nonRepudiation', 'keyEncipherment', 'dataEncipherment', 'keyAgreement', 'keyCertSign', 'cRLSign', 'encipherOnly', 'decipherOnly'];

/** The keyUsage bits of a certificate by name (pkijs is loaded only here). */
export async function keyUsageOf(der: Uint8Array): Promise<string[]> {
  const [pkijs, asn1js] = await Promise.all([import('pkijs'), import('asn1js')]);
  const extension = pkijs.Certificate.fromBER(der).extensions?.find((e) => e.extnID === '2.5.29.15');
  if (!extension) return [];
  const bits = asn1js.fromBER(extension.extnValue.valueBlock.valueHexView).result as InstanceType<typeof asn1js.BitString>;
  const bytes = bits.valueBlock.valueHexView;
  return KEY_USAGE_NAMES.filter((_, index) => ((bytes[index >> 3] ?? 0) & (0x80 >> (index & 7))) !== 0);
}
