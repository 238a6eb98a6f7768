import { X509Certificate, createHash } from 'node:crypto';
import type { Command } from 'commander';
import { schemeLabel, signerKeyOf } from '../../core/cms/algorithms.js';
import type { CurveName } from '../../core/cms/ecdsa.js';
import { signingTerms } from '../../core/csc/signature.js';
import { EsignError, isEsignError } from '../../core/errors.js';
import { keyUsageNames } from '../../core/key-usage.js';
import type { CredentialInfo } from '../../core/csc/shapes.js';
import type { SpokenProtocol } from '../../io/csc-client.js';
import type { Context } from '../context.js';
import { table } from '../io.js';
import type { CommandModule } from '../command.js';
import { renderError } from '../render-error.js';
import { createCscClient } from '../service-clients.js';
import { credentialQualifier, type CredentialQualifier } from '../trusted-lists.js';
import { describeQualification } from '../../core/qualification/describe.js';
import type { Qualification } from '../../core/qualification/determine.js';

export const defineCommand: CommandModule['defineCommand'] = (program: Command, run) => {
  const credentials = program
    .command('credentials')
    .summary('list and choose signing credentials')
    .description(
      'List the signing credentials of the signer, show one, or make one the profile default.\nThe first call opens the browser to sign in to the signing service; the token is kept for an hour.',
    );

  credentials
    .command('list')
    .description(
      'list your credentials: status, subject, issuer, validity, key (RSA length or EC curve), the scheme esign signs with, ' +
        'and, when verified EU trusted lists are cached, what each signs (QESig, QESeal, AdESig-QC, …)',
    )
    .action((_options: unknown, command: Command) => run(command, (ctx) => runList(ctx)));

  credentials
    .command('info <credentialID>')
    .alias('show')
    .description(
      'show a credential: its certificate chain, key usage, status, and its qualification when trusted lists are cached',
    )
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
  /** EC keys: the curve. */
  curve?: CurveName;
  /** How esign signs with it by default, or null when it cannot. */
  signatureAlgorithm: string | null;
  isDefault: boolean;
  signer: CertificateSummary;
  authorization: AuthorizationSummary;
}

/** How a signature with the credential is authorized, and what it asks for, in the service's words. */
export interface AuthorizationSummary {
  /** oauth2code: approved in the browser; explicit: PIN and/or OTP; implicit: by the service itself. */
  mode: CredentialInfo['authMode'];
  pin?: { required: boolean; format?: 'A' | 'N'; label?: string; description?: string };
  otp?: {
    required: boolean;
    type: 'offline' | 'online';
    format?: 'A' | 'N';
    label?: string;
    description?: string;
    provider?: string;
  };
  /** Signatures one authorization may cover, when the service says. */
  multisign?: number;
  scal?: '1' | '2';
}

export function summarizeAuthorization(info: CredentialInfo): AuthorizationSummary {
  const summary: AuthorizationSummary = { mode: info.authMode };
  if (info.pin) {
    const { presence, ...words } = info.pin;
    summary.pin = { required: presence === 'true', ...words };
  }
  if (info.otp) {
    const { presence, id: _id, ...words } = info.otp;
    summary.otp = { required: presence === 'true', ...words };
  }
  if (info.multisign !== undefined) summary.multisign = info.multisign;
  if (info.scal) summary.scal = info.scal;
  return summary;
}

/** One short phrase: "browser approval", "PIN + OTP (authenticator)", "PIN", "by the service". */
export function authorizationText(authorization: AuthorizationSummary): string {
  if (authorization.mode === 'oauth2code') return 'browser approval';
  if (authorization.mode === 'implicit') return 'by the service (implicit)';
  const parts = [
    ...(authorization.pin ? [`PIN${authorization.pin.required ? '' : ' (optional)'}`] : []),
    ...(authorization.otp
      ? [
          `OTP (${authorization.otp.type === 'offline' ? 'authenticator' : 'sent by the service'}${authorization.otp.required ? '' : ', optional'})`,
        ]
      : []),
  ];
  return parts.length > 0 ? parts.join(' + ') : 'explicit (nothing asked)';
}

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
  if (!signerDer)
    throw new EsignError('CSC_BAD_RESPONSE', `The signing service gave no certificate for ${info.credentialID}.`);
  const signer = describeCertificate(signerDer);
  const key = signerKeyOf(signerDer);
  const summary: CredentialSummary = {
    credentialID: info.credentialID,
    status: info.status,
    keyAlgorithm: key.type === 'rsa' ? 'RSA' : key.type === 'ec' ? 'EC' : key.name,
    keyLength: key.type === 'other' ? info.keyLengthBits : key.bits,
    ...(key.type === 'ec' ? { curve: key.curve } : {}),
    signatureAlgorithm: defaultScheme(info),
    isDefault: info.credentialID === defaultId,
    signer,
    authorization: summarizeAuthorization(info),
  };
  if (info.status === 'disabled') {
    if (info.certificateStatus === 'revoked') summary.statusReason = 'certificate revoked';
    else if (info.certificateStatus === 'expired' || Date.parse(signer.validTo) < now.getTime())
      summary.statusReason = 'certificate expired';
    else if (Date.parse(signer.validFrom) > now.getTime()) summary.statusReason = 'certificate not yet valid';
  }
  return summary;
}

/** The scheme esign signs with by default, in words; null when the credential lists nothing esign can use. */
function defaultScheme(info: CredentialInfo): string | null {
  try {
    return schemeLabel(signingTerms(info).scheme);
  } catch (error) {
    if (isEsignError(error, 'CREDENTIAL_UNSUPPORTED_KEY')) return null;
    throw error;
  }
}

/** "RSA 2048", "EC P-384". */
function keyText(summary: CredentialSummary): string {
  return summary.curve ? `${summary.keyAlgorithm} ${summary.curve}` : `${summary.keyAlgorithm} ${summary.keyLength}`;
}

function statusText(summary: CredentialSummary): string {
  return summary.statusReason ? `${summary.status} (${summary.statusReason})` : summary.status;
}

async function runList(ctx: Context): Promise<void> {
  const profile = await ctx.profile();
  const client = await createCscClient(ctx);
  const { infos, unreadable } = await client.listCredentials();
  const signingService = spokenSummary(await client.protocol());
  const qualifier = await credentialQualifier(ctx);
  const summaries = infos.map((info) => ({
    ...summarize(info, ctx.clock.now(), profile.settings.credential),
    ...qualificationOf(info, qualifier, ctx.clock.now()),
  }));
  // The others are listed; each left out is named with why, as the error it gave would say it.
  const leftOut = unreadable.map(({ credentialID, error }) => ({ credentialID, error: renderError(error).json.error }));
  for (const { credentialID, error } of leftOut)
    ctx.io.warn(
      `credential ${credentialID} is left out: the signing service did not give its info (${error.message.replace(/\.$/, '')}).`,
    );
  ctx.io.result(
    {
      profile: profile.name,
      signingService,
      credentials: summaries,
      ...(leftOut.length > 0 ? { unreadable: leftOut } : {}),
    },
    () => {
      if (summaries.length === 0) {
        const filter = profile.settings.cscClientData;
        // Some services filter credentials/list by clientData and answer an empty list, not an error, for the wrong one.
        return `No credentials: the signing service lists none for this signer${filter === undefined ? '' : ` with clientData ${JSON.stringify(filter)}`}. A filter may be hiding them: ${filter === undefined ? 'some providers list a kind of credential only for a clientData they name (e.g. EVCS): set ESIGN_CSC_CLIENT_DATA' : 'try another ESIGN_CSC_CLIENT_DATA (cscClientData), or unset it'}.`;
      }
      const rows = summaries.map((s) => [
        `${s.isDefault ? '* ' : '  '}${s.credentialID}`,
        statusText(s),
        s.signer.subjectCN,
        s.signer.issuerCN,
        s.signer.validTo.slice(0, 10),
        keyText(s),
        s.signatureAlgorithm ?? '(none esign can use)',
        authorizationText(s.authorization),
        ...(qualifier ? [qualificationCell(s.qualification)] : []),
      ]);
      const headings = ['  id', 'status', 'subject', 'issuer', 'valid until', 'key', 'signs with', 'authorization'];
      return (
        table(qualifier ? [...headings, 'qualification'] : headings, rows) +
        (summaries.some((s) => s.isDefault) ? '\n(* default of this profile)' : '')
      );
    },
  );
}

async function runInfo(ctx: Context, credentialID: string): Promise<void> {
  const profile = await ctx.profile();
  const client = await createCscClient(ctx);
  const info = await client.credentialInfo(credentialID);
  const summary = summarize(info, ctx.clock.now(), profile.settings.credential);
  const chain = info.certificates.map(describeCertificate);
  const keyUsage = await keyUsageOf(info.certificates[0] as Uint8Array);
  const signingService = spokenSummary(await client.protocol());
  const qualification = qualificationOf(info, await credentialQualifier(ctx), ctx.clock.now()).qualification;
  const result = {
    ...summary,
    ...(qualification ? { qualification } : {}),
    algorithms: info.algorithms,
    authMode: info.authMode,
    keyUsage,
    chain,
    certificates: info.certificates.map((der) => Buffer.from(der).toString('base64')),
    signingService,
  };
  ctx.io.result(result, () =>
    [
      `credential   ${summary.credentialID}${summary.isDefault ? ' (default)' : ''}`,
      `service      ${spokenText(signingService)}`,
      `status       ${statusText(summary)}`,
      `key          ${keyText(summary)}${summary.curve ? '' : ' bits'} (${info.algorithms.join(', ')}), authMode ${info.authMode}`,
      `signs with   ${summary.signatureAlgorithm ?? `nothing esign can use (${info.algorithms.join(', ')})`}`,
      `authorized   ${authorizationText(summary.authorization)}${summary.authorization.multisign ? `, up to ${summary.authorization.multisign} signatures each` : ''}${summary.authorization.scal ? `, SCAL ${summary.authorization.scal}` : ''}`,
      ...(summary.authorization.pin
        ? [
            `  PIN        ${[summary.authorization.pin.label, summary.authorization.pin.description].filter(Boolean).join(': ') || '(no label)'}${summary.authorization.pin.format === 'N' ? ' (digits)' : ''}`,
          ]
        : []),
      ...(summary.authorization.otp
        ? [
            `  OTP        ${[summary.authorization.otp.label, summary.authorization.otp.description].filter(Boolean).join(': ') || '(no label)'}${summary.authorization.otp.provider ? ` — ${summary.authorization.otp.provider}` : ''}`,
          ]
        : []),
      `key usage    ${keyUsage.length > 0 ? keyUsage.join(', ') : '(not stated)'}`,
      ...(qualification ? [`qualified    ${describeQualification(qualification)}`] : []),
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

/** What a signature made now with the credential would be, when trusted lists are cached. */
function qualificationOf(
  info: CredentialInfo,
  qualifier: CredentialQualifier | undefined,
  now: Date,
): { qualification?: Qualification } {
  const qualification = qualifier?.(info.certificates, now);
  return qualification ? { qualification } : {};
}

/** "QESig (TEST)", "AdESig-QC", "N/A: the chain the signing service sent does not verify: …". */
function qualificationCell(qualification: Qualification | undefined): string {
  if (!qualification) return '?';
  const name = `${qualification.name}${qualification.test ? ' (TEST)' : ''}`;
  return qualification.name === 'N/A' || qualification.name.startsWith('Indeterminate ')
    ? `${name}: ${qualification.reason ?? ''}`
    : name;
}

/** Which CSC API esign speaks with the service, and how it knows (`cscVersion` setting or the service's info). */
function spokenSummary(spoken: SpokenProtocol): {
  cscVersion: '1' | '2';
  specs?: string;
  chosenBy: 'setting' | 'info';
} {
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
    throw new EsignError(
      'CREDENTIAL_DISABLED',
      `The credential ${credentialID} is ${statusText(summary)} and cannot sign.`,
      {
        hint: 'Pick an enabled one from `esign credentials list`.',
        details: { credentialID },
      },
    );
  }
  (await ctx.config()).set(profile.name, 'credential', credentialID);
  ctx.io.result(
    { profile: profile.name, credential: credentialID },
    () => `${profile.name}: default credential is now ${credentialID}`,
  );
}

/** The keyUsage bits of a certificate by name (pkijs is loaded only here). */
export async function keyUsageOf(der: Uint8Array): Promise<string[]> {
  const [pkijs, asn1js] = await Promise.all([import('pkijs'), import('asn1js')]);
  const extension = pkijs.Certificate.fromBER(der).extensions?.find((e) => e.extnID === '2.5.29.15');
  if (!extension) return [];
  const bits = asn1js.fromBER(extension.extnValue.valueBlock.valueHexView).result as InstanceType<
    typeof asn1js.BitString
  >;
  return keyUsageNames(bits.valueBlock.valueHexView);
}
