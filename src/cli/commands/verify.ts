import type { Command } from 'commander';
import { describeQualification, describeTimestampQualification } from '../../core/qualification/describe.js';
import type {
  VerificationReport,
  SignatureReport,
  ChainReport,
  PadesLevel,
  RevocationMode,
} from '../../core/verify/types.js';
import type { VerifiedFile } from '../../core/forms/form.js';
import type { Context } from '../context.js';
import type { CommandModule } from '../command.js';
import { PdfPasswords, withPasswordOptions, type PdfPasswordOptions } from '../pdf-password.js';
import { usableTrustedLists } from '../trusted-lists.js';

export interface VerifyCommandOptions extends PdfPasswordOptions {
  trust: string[];
  signature?: string;
  level?: string;
  extract?: string;
  /** Fetch nothing: revocation status the file does not hold stays unknown. */
  offline?: boolean;
  /** `hard` (EN 319 102-1, default) or `soft-fail`. */
  revocation?: string;
}

const LEVELS: readonly PadesLevel[] = ['B-B', 'B-T', 'B-LT', 'B-LTA'];
const REVOCATION_MODES: readonly RevocationMode[] = ['hard', 'soft-fail'];

export const defineCommand: CommandModule['defineCommand'] = (program: Command, run) => {
  const command = program
    .command('verify')
    .summary('verify the signatures and timestamps in a PDF, a .p7s, a .p7m or an ASiC container')
    .description(
      'Check every signature and document timestamp in FILE.pdf: signer, claimed time (/M), signature timestamp, ' +
        'integrity of the signed bytes, the signature value, what the signature covers and what was appended after it, ' +
        "the chain to the trust anchors (--trust, else the profile's trustAnchors), revocation status from the DSS and the CMS, " +
        'and the level reached (PAdES or CAdES: B-LT from the validation data in the DSS or the CMS, B-LTA from a document ' +
        'timestamp, an archive-time-stamp-v3 (ats-hash-index-v3 or the older ats-hash-index), an archive-time-stamp-v2 or an ASiC-E archive manifest). When verified EU trusted lists are cached (esign trust update), their qualified CAs ' +
        'and TSAs are trust anchors too, and each signature gets its qualification (ETSI TS 119 615: QESig, QESeal, ' +
        'AdESig-QC, AdESeal-QC, AdESig, AdESeal, their Indeterminate forms, Not AdES or N/A, with the reason) and each timestamp whether it is ' +
        'a qualified electronic time stamp. With --signature FILE.p7s, check a detached CAdES signature of FILE. ' +
        'FILE.p7m (enveloping CAdES, the content inside, DER or BER) is checked as it is; --extract OUT then writes its content. ' +
        'FILE.asics (ASiC-S) and FILE.asice (ASiC-E) are checked with their layout (safe and unique names, none "." or "..", ' +
        'no encryption, no ZIP bomb; a mimetype not first, compressed, with an extra field or trailing white space is read ' +
        'with a warning), each signature with the files it covers (an ASiC-E manifest entry changed: VERIFY_FAILED), ' +
        'and the files no signature covers or a manifest names but the container lacks (VERIFY_MODIFIED, whatever the trust). ' +
        'Reads DER and BER (as NSS writes), RSA PKCS#1 v1.5, RSASSA-PSS and ECDSA over SHA-2 and SHA-3, Ed25519 and Ed448, signatures ' +
        'with or without signed attributes, and adbe.pkcs7.sha1; in CAdES, each SignerInfo as a signature and each ' +
        'counter-signature verified under the signature it signs. Each verdict comes with its ETSI EN 319 102-1 ' +
        'indication (TOTAL-PASSED, TOTAL-FAILED or INDETERMINATE, and a sub-indication).\n\n' +
        'Exit 0 only when every signature is valid and trusted (and reaches --level). Exit 12 when every signature ' +
        'is intact and validly signed but one uses an algorithm no longer acceptable (SHA-1, MD5, RSA under 2048 bits, ' +
        'in the signature, a timestamp token or a certificate: VERIFY_WEAK_ALGORITHM). An algorithm esign does not ' +
        'implement is INDETERMINATE/CRYPTO_CONSTRAINTS_FAILURE, named, never TOTAL-FAILED. ' +
        'Revocation (EN 319 102-1): each certificate of a trusted chain but the anchor (and OCSP responders with ' +
        "id-pkix-ocsp-nocheck) needs its status; where the file holds none, esign asks the certificate's OCSP " +
        'responder, then its CRL distribution point (once per certificate per run, through the proxies and ESIGN_CA_FILE, ' +
        '10 s each; --offline: never). A status not established is INDETERMINATE: TRY_LATER (no answer) or ' +
        'REVOCATION_OUT_OF_BOUNDS_NO_POE (data issued after the certificate expired); --revocation soft-fail passes it with a warning. ' +
        'Revocation data signed with SHA-1 is weak (exit 12).\n\n' +
        'Otherwise exit 9; the JSON code says why: VERIFY_FAILED (invalid: changed bytes, bad ' +
        'signature, revoked or expired certificate, page content changed later), VERIFY_UNTRUSTED (valid, but no chain ' +
        'to a trust anchor), VERIFY_MODIFIED (valid, but an unsigned update was appended after it), ' +
        'VERIFY_REVOCATION_UNKNOWN (valid and trusted, but a revocation status not established), VERIFY_LEVEL ' +
        '(valid, below --level), VERIFY_NO_SIGNATURES.',
    )
    .argument('<file>', 'the signed PDF, .p7m, .asics or .asice, or the content of a .p7s given with --signature')
    .option(
      '--trust <pem>',
      "a trusted root certificate (PEM or DER), instead of the profile's trustAnchors; repeatable",
      collect,
      [],
    )
    .option('--signature <p7s>', 'a detached CAdES signature of FILE')
    .option(
      '--extract <path>',
      'with a .p7m: write the signed content to FILE; with an .asics/.asice: its documents into the directory FILE. Only when every signature checks out (valid and trusted) and, in a container, covers every document',
    )
    .option('--level <level>', 'also require this level (PAdES or CAdES) for every signature: B-B, B-T, B-LT or B-LTA')
    .option(
      '--offline',
      'fetch nothing: a certificate whose revocation status the file does not hold stays unknown (INDETERMINATE/TRY_LATER unless --revocation soft-fail)',
    )
    .option(
      '--revocation <mode>',
      'hard (default, EN 319 102-1): a signature whose revocation status is not established is INDETERMINATE (VERIFY_REVOCATION_UNKNOWN, exit 9); soft-fail (Acrobat, pyHanko): it passes, with a warning on each signature',
    );
  withPasswordOptions(command)
    .addHelpText(
      'after',
      '\nExamples:\n  esign verify contract-signed.pdf\n  esign verify --trust root.pem --json contract-signed.pdf\n  esign verify notes.txt --signature notes.txt.p7s\n  esign verify fattura.xml.p7m --extract fattura.xml\n  esign verify --level B-LT archived.pdf',
    )
    .action((file: string, options: VerifyCommandOptions, command: Command) =>
      run(command, (ctx) => runVerify(file, options, ctx)),
    );
};

export async function runVerify(file: string, options: VerifyCommandOptions, ctx: Context): Promise<void> {
  const { EsignError } = await import('../../core/errors.js');
  if (options.level !== undefined && !LEVELS.includes(options.level as PadesLevel)) {
    throw new EsignError('USAGE', `--level must be one of ${LEVELS.join(', ')}, not ${JSON.stringify(options.level)}.`);
  }
  if (options.revocation !== undefined && !REVOCATION_MODES.includes(options.revocation as RevocationMode)) {
    throw new EsignError(
      'USAGE',
      `--revocation must be one of ${REVOCATION_MODES.join(', ')}, not ${JSON.stringify(options.revocation)}.`,
    );
  }
  const { loadTrustAnchors } = await import('../../io/tsa-client.js');
  const paths = options.trust.length > 0 ? options.trust : ((await ctx.profile()).settings.trustAnchors ?? []);
  const trustAnchors = await loadTrustAnchors(paths);
  const now = new Date();
  const form = (await import('../../io/forms/registry.js')).formForVerifying(file, options.signature !== undefined);
  if (options.extract !== undefined && !form.declares.extract)
    throw new EsignError(
      'USAGE',
      '--extract writes the content of a .p7m or an ASiC container; this file is neither.',
      {
        hint: 'Name the .p7m or container, or leave out --extract.',
      },
    );
  // A missing input fails before any list is fetched.
  const [{ access }, { inputError }] = await Promise.all([
    import('node:fs/promises'),
    import('../../io/file-source.js'),
  ]);
  await access(file).catch((error: unknown) => {
    throw inputError(file, error);
  });
  // With lists, their CA/QC and TSA/QTST services are anchors alongside the configured ones (the
  // sandbox's TEST lists fetched on first use, unless --trust names the anchors to use).
  const trustedLists = await usableTrustedLists(ctx, { fetchSandboxLists: options.trust.length === 0 });
  const anchored = paths.length > 0 || trustedLists !== undefined;
  const { revocationPolicy } = await import('../../io/verify-revocation.js');
  const revocation = revocationPolicy(ctx, {
    mode: (options.revocation ?? 'hard') as RevocationMode,
    offline: options.offline === true,
  });
  const verifyOptions = { trustAnchors, now, revocation, ...(trustedLists ? { trustedLists } : {}) };
  const passwords = form.declares.passwords ? await PdfPasswords.from(options, ctx) : undefined;
  const signature = options.signature === undefined ? undefined : await readDetachedSignature(options.signature);
  const { FileByteSource } = await import('../../io/file-source.js');
  const source = await FileByteSource.open(file);
  let verified: VerifiedFile | undefined;
  try {
    const input = { file, source, ...(signature ? { signature } : {}) };
    verified = passwords
      ? await passwords.open(file, (password) => form.verify(input, { ...verifyOptions, password }))
      : await form.verify(input, verifyOptions);
    const { report, extract } = verified;
    await finishVerify(report, anchored, options, ctx, async (code) => {
      if (options.extract === undefined || !extract) return {};
      if (code !== null) {
        ctx.io.warn(extract.refused(file, options.extract));
        return {};
      }
      await extract.write(options.extract);
      return { extracted: options.extract };
    });
  } finally {
    verified?.close?.();
    await source.close();
  }
}

/** Reports a verification (what --json prints, the exit code) and returns the code, null when it all checks out. */
export async function finishVerify(
  report: VerificationReport,
  anchored: boolean,
  options: VerifyCommandOptions,
  ctx: Context,
  /** What to do once the verdict is known, before it is printed (--extract); its fields join the report. */
  afterVerdict?: (code: string | null) => Promise<Record<string, unknown>>,
): Promise<string | null> {
  const { ExitCode } = await import('../../core/errors.js');
  if (!anchored)
    for (const signature of report.signatures)
      signature.warnings.push('no trust anchors: pass --trust ROOT.pem or set trustAnchors in the profile');

  let code: string | null = report.code;
  if (code === null && options.level !== undefined) {
    const wanted = LEVELS.indexOf(options.level as PadesLevel);
    const short = report.signatures.filter(
      (s) => s.kind !== 'docTimeStamp' && (s.level === undefined || LEVELS.indexOf(s.level) < wanted),
    );
    if (short.length > 0) code = 'VERIFY_LEVEL';
  }
  const extra = (await afterVerdict?.(code)) ?? {};
  ctx.io.result({ ...report, ...extra, code, valid: code === null }, () => human(report, code));
  if (code !== null) {
    process.exitCode = code === 'VERIFY_WEAK_ALGORITHM' ? ExitCode.weakAlgorithm : ExitCode.verification;
    ctx.io.error(`esign: ${code}: ${summary(report, code)}`);
  }
  return code;
}

/** The detached signature `--signature` names, read whole. */
async function readDetachedSignature(path: string): Promise<Uint8Array> {
  const [{ readFile }, { inputError }] = await Promise.all([
    import('node:fs/promises'),
    import('../../io/file-source.js'),
  ]);
  try {
    return new Uint8Array(await readFile(path));
  } catch (error) {
    throw inputError(path, error);
  }
}

function summary(report: VerificationReport, code: string): string {
  if (code === 'VERIFY_NO_SIGNATURES') return `${report.file} has no signatures.`;
  if (code === 'VERIFY_LEVEL') return 'a signature does not reach the required level.';
  const bad = report.signatures.filter((s) => s.status !== 'valid').map((s) => `#${s.index} ${s.status}`);
  // A status not established: why, naming the responders and distribution points tried (one line).
  const why =
    code === 'VERIFY_REVOCATION_UNKNOWN'
      ? report.signatures
          .find((s) => s.status === 'revocation-unknown')
          ?.problems.find((p) => p.includes('is not established'))
      : undefined;
  return `${bad.join(', ')} (of ${report.signatures.length})${why ? `: ${why.replace(/\.$/, '')}` : ''}.`;
}

function human(report: VerificationReport, code: string | null): string {
  if (report.signatures.length === 0) return `✗ ${report.file}: no signatures`;
  const lines: string[] = [
    `${report.file}: ${report.signatures.length} signature(s)${report.dss ? `; DSS in revision ${report.dss.revision} (${report.dss.certs} certs, ${report.dss.ocsps} OCSP, ${report.dss.crls} CRL)` : ''}`,
  ];
  for (const warning of report.warnings ?? []) lines.push(`! ${warning}`);
  for (const s of report.signatures) lines.push('', ...describe(s));
  lines.push('', code === null ? '✓ all signatures valid and trusted' : `✗ ${code}`);
  return lines.join('\n');
}

const MARK: Record<SignatureReport['status'], string> = {
  valid: '✓ valid',
  invalid: '✗ INVALID',
  untrusted: '? valid but UNTRUSTED',
  modified: '! valid, but the file was CHANGED after it',
  'revocation-unknown': '? valid and trusted, but the REVOCATION STATUS is NOT ESTABLISHED',
  weak: '~ intact, but the algorithm is NOT ACCEPTABLE',
};

function describe(s: SignatureReport, counter = false): string[] {
  const what = counter
    ? 'Counter-signature'
    : s.kind === 'docTimeStamp'
      ? 'Document timestamp'
      : s.kind === 'cades'
        ? 'CAdES signature'
        : 'Signature';
  const etsi = s.subIndication ? `${s.indication}/${s.subIndication}` : s.indication;
  // Invalid only in that it cannot be checked: an algorithm esign does not implement.
  const mark =
    s.status === 'invalid' && s.indication === 'INDETERMINATE' && s.subIndication === 'CRYPTO_CONSTRAINTS_FAILURE'
      ? '? NOT CHECKED (an algorithm esign does not implement)'
      : MARK[s.status];
  const out = [`#${s.index} ${what}${s.field ? ` (field ${s.field})` : ''}: ${mark} [ETSI ${etsi}]`];
  if (s.signer)
    out.push(
      `  signer      ${s.signer.subject}`,
      `  issuer      ${s.signer.issuer}`,
      `  serial      ${s.signer.serialNumber}`,
    );
  if (s.claimedTime) out.push(`  claimed     ${s.claimedTime} (not proven)`);
  if (s.timestamp)
    out.push(`  timestamp   ${s.timestamp.time || '?'} by ${s.timestamp.tsa}${s.timestamp.valid ? '' : ' — INVALID'}`);
  if (s.timestamp?.qualified) out.push(`              ${describeTimestampQualification(s.timestamp.qualified)}`);
  out.push(
    `  integrity   ${s.integrity.valid ? `ok (${s.integrity.digestAlgorithm} over the signed bytes)` : `FAILED: ${s.integrity.reason ?? ''}`}`,
  );
  const algorithm = s.signatureValue.key
    ? `${s.signatureValue.algorithm}, ${s.signatureValue.key}`
    : s.signatureValue.algorithm;
  out.push(
    `  signature   ${s.signatureValue.valid ? `ok (${algorithm})` : `FAILED: ${s.signatureValue.reason ?? ''} (${algorithm})`}`,
  );
  if (s.coverage) {
    const c = s.coverage;
    out.push(
      `  coverage    ${c.wholeFile ? 'the whole file' : `revision ${c.revision} of ${c.revisions} (${c.signedBytes} bytes)`}`,
    );
    for (const u of c.appended)
      out.push(
        `              + revision ${u.revision}: ${u.kind === 'unsigned' ? 'UNSIGNED update' : u.kind}${u.pageContentChanged ? ' — CHANGES PAGE CONTENT' : ''}`,
      );
  }
  if (s.chain) out.push(...chainLines(s.chain, 'chain'));
  if (s.timestamp?.chain) out.push(...chainLines(s.timestamp.chain, 'TSA chain'));
  if (s.level) out.push(`  level       ${s.level}`);
  if (s.qualification) out.push(`  qualified   ${describeQualification(s.qualification)}`);
  if (s.certification)
    out.push(`  certifies   ${s.certification.permits.replace('-', ' ')} after it (DocMDP P=${s.certification.level})`);
  for (const p of s.problems) out.push(`  ✗ ${p}`);
  for (const w of s.warnings) out.push(`  ! ${w}`);
  for (const c of s.counterSignatures ?? []) out.push(...describe(c, true).map((line) => `    ${line}`));
  return out;
}

function chainLines(chain: ChainReport, label: string): string[] {
  const out = [`  ${label.padEnd(11)} ${chain.trusted ? 'trusted' : 'NOT trusted'} (checked at ${chain.checkedAt})`];
  chain.certificates.forEach((cert, i) => {
    const rev = chain.revocation[i];
    const status = !rev
      ? ''
      : rev.source === 'trust-anchor'
        ? 'trust anchor'
        : rev.source === 'none'
          ? `revocation unknown${rev.unestablished ? ` (${rev.unestablished.subIndication})` : ''}`
          : `${rev.status} (${rev.source}${rev.url ? ` ${rev.url}` : ''})${rev.unestablished ? ` — not established (${rev.unestablished.subIndication})` : ''}`;
    out.push(`              ${i === 0 ? '' : '← '}${cert.subject} — ${status}`);
  });
  return out;
}

function collect(value: string, previous: string[]): string[] {
  return [...previous, value];
}
