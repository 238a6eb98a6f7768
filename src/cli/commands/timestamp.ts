import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { Option, type Command } from 'commander';
import { IMPRINT_HASH_NAME_BY_OID } from '../../core/cms/oids.js';
import { bytesEqual } from '../../core/cms/parse.js';
import { EsignError, isEsignError } from '../../core/errors.js';
import { parseTimeStampToken, readTimeStampResp, rejection, verifyTsaCertificate } from '../../core/tsp/response.js';
import type { ParsedTimeStampToken } from '../../core/tsp/response.js';
import type { TstInfo } from '../../core/tsp/tst-info.js';
import { digestAlgorithm } from '../../core/verify/algorithms.js';
import { checkTokenSignature } from '../../core/verify/token-signature.js';
import { writeBytesAtomically } from '../../io/atomic-write.js';
import { inputError } from '../../io/file-source.js';
import { loadTrustAnchors } from '../../io/tsa-client.js';
import type { TsaTimestamp } from '../../io/tsa-client.js';
import type { Context } from '../context.js';
import { createTsaClient } from '../service-clients.js';
import { batchExitCode, type CommandModule } from '../command.js';

export interface TimestampCommandOptions {
  verify: boolean;
  /** SHA-256 as hex, instead of reading a file. */
  digest?: string;
  output?: string;
  force: boolean;
  /** Trust anchor files for --verify, instead of the profile's. */
  ca: string[];
  continueOnError: boolean;
  /** `asics`: an ASiC-S container of the file and its token (META-INF/timestamp.tst) instead of a .tsr. */
  format?: 'tsr' | 'asics';
}

export const defineCommand: CommandModule['defineCommand'] = (program: Command, run) => {
  program
    .command('timestamp')
    .summary('get or check RFC 3161 timestamps (.tsr) for files')
    .description(
      "Get an RFC 3161 timestamp for each file from the profile's timestamp authority and write it next to the file as " +
        'FILE.tsr (the DER TimeStampResp, as `openssl ts -reply` writes it). Every reply is checked before it is written: ' +
        'status, message imprint, nonce, policy, token signature and TSA certificate.\n\n' +
        'With --verify, check FILE against FILE.tsr: data hash, token signature and the TSA certificate chain.',
    )
    .argument('[files...]', 'files to timestamp; with --verify: FILE [TSR]')
    .option('--verify', 'check a timestamp instead of getting one', false)
    .option('--digest <hex>', 'a SHA-256 (64 hex digits) to timestamp or check instead of a file')
    .option(
      '-o, --output <file>',
      'where to write the .tsr (one input only; default FILE.tsr, or HEX.tsr with --digest)',
    )
    .option('-f, --force', 'replace an existing .tsr', false)
    .option(
      '--ca <file>',
      "with --verify: a trusted root certificate (PEM), instead of the profile's trustAnchors; repeatable",
      collect,
      [],
    )
    .option('--continue-on-error', 'timestamp the other files when one fails; report each failure', false)
    .addOption(
      new Option(
        '--format <format>',
        'tsr (FILE.tsr, the default) or asics (FILE.asics: an ASiC-S of the file and its token, META-INF/timestamp.tst)',
      ).choices(['tsr', 'asics']),
    )
    .addHelpText(
      'after',
      '\nExamples:\n  esign timestamp report.csv                       writes report.csv.tsr\n  esign timestamp report.csv --format asics        writes report.csv.asics (ASiC-S)\n  esign timestamp --digest 9f86d0…0a08             writes 9f86d0…0a08.tsr\n  esign timestamp --verify report.csv              checks report.csv.tsr\n  openssl ts -reply -in report.csv.tsr -text       the same file, read by OpenSSL',
    )
    .action((files: string[], options: TimestampCommandOptions, command: Command) =>
      run(command, (ctx) => (options.verify ? runVerify(files, options, ctx) : runTimestamp(files, options, ctx))),
    );
};

interface Subject {
  /** The file, or `sha256:HEX` for --digest. */
  input: string;
  sha256: () => Promise<Uint8Array>;
  defaultTsr: string;
}

function subjectsOf(files: readonly string[], options: TimestampCommandOptions): Subject[] {
  if (options.digest !== undefined) {
    if (files.length > (options.verify ? 1 : 0))
      throw usage('--digest takes the place of the files; give no file names with it.');
    const digest = parseDigest(options.digest);
    const hex = Buffer.from(digest).toString('hex');
    return [{ input: `sha256:${hex}`, sha256: async () => digest, defaultTsr: `${hex}.tsr` }];
  }
  if (files.length === 0) throw usage('Name at least one file (or --digest HEX).');
  return files.map((file) => ({ input: file, sha256: () => hashFile(file), defaultTsr: `${file}.tsr` }));
}

export async function runTimestamp(files: string[], options: TimestampCommandOptions, ctx: Context): Promise<void> {
  const subjects = subjectsOf(files, options);
  if (options.output !== undefined && subjects.length > 1) throw usage('--output works with one input only.');
  const container = options.format === 'asics';
  if (container && options.digest !== undefined)
    throw usage('--format asics puts the file in the container; name the file, not --digest.');
  const profile = await ctx.profile();
  const tsa = createTsaClient(ctx, profile);
  if (!tsa) {
    throw new EsignError(
      'TSA_NOT_CONFIGURED',
      `The profile ${JSON.stringify(profile.name)} has no timestamp authority.`,
      {
        hint: 'Set one with `esign config set tsaUrls URL` (or ESIGN_TSA_URL).',
      },
    );
  }
  const failures: EsignError[] = [];
  let succeeded = 0;
  for (const subject of subjects) {
    try {
      const imprint = await subject.sha256();
      const stamp = await tsa.timestamp(imprint);
      const output = options.output ?? (container ? `${subject.input}.asics` : subject.defaultTsr);
      if (container) await writeStampedContainer(subject.input, output, imprint, stamp, options.force);
      else await writeBytesAtomically(output, stamp.response, { overwrite: options.force });
      succeeded++;
      ctx.io.result(
        describeStamp(subject.input, output, imprint, stamp),
        () => `✓ ${subject.input} → ${output} (${stamp.genTime.toISOString()}, serial ${stamp.serialNumber})`,
      );
    } catch (error) {
      const failure = isEsignError(error)
        ? error
        : new EsignError('INTERNAL', `Unexpected error while timestamping ${subject.input}.`, { cause: error });
      if (!options.continueOnError || subjects.length === 1) throw failure;
      failures.push(failure);
      ctx.io.result(
        { input: subject.input, error: { code: failure.code, message: failure.message, hint: failure.hint } },
        () => `✗ ${subject.input}: ${failure.message}`,
      );
    }
  }
  if (failures.length > 0) {
    process.exitCode = batchExitCode(succeeded, failures);
    ctx.io.error(
      `esign: ${succeeded} of ${subjects.length} timestamps written; ${failures.length} failed (see above).`,
    );
  }
}

/** An ASiC-S of the file and its token; the ZIP library loads only here. The file is streamed in and hashed again. */
async function writeStampedContainer(
  input: string,
  output: string,
  sha256: Uint8Array,
  stamp: TsaTimestamp,
  overwrite: boolean,
): Promise<void> {
  const [{ writeTimestampedAsicS }, { fileSystemDocuments }] = await Promise.all([
    import('../../io/forms/asic-s/files.js'),
    import('../../io/document-files.js'),
  ]);
  await writeTimestampedAsicS(fileSystemDocuments, {
    input,
    output,
    token: stamp.token,
    sha256,
    overwrite,
    mtime: stamp.genTime,
  });
}

function describeStamp(
  input: string,
  output: string,
  imprint: Uint8Array,
  stamp: TsaTimestamp,
): Record<string, unknown> {
  return {
    input,
    output,
    sha256: Buffer.from(imprint).toString('hex'),
    genTime: stamp.genTime.toISOString(),
    serialNumber: stamp.serialNumber,
    policy: stamp.tstInfo.policy,
    accuracy: stamp.tstInfo.accuracy ?? null,
    tsa: stamp.tstInfo.tsaName ?? null,
    url: stamp.url,
    chainChecked: stamp.chainChecked,
  };
}

export async function runVerify(files: string[], options: TimestampCommandOptions, ctx: Context): Promise<void> {
  const [first, second, ...extra] = files;
  if (extra.length > 0 || (options.digest === undefined && first === undefined)) {
    throw usage('--verify takes FILE [TSR], or --digest HEX TSR.');
  }
  const subject = subjectsOf(options.digest === undefined ? [first as string] : [], {
    ...options,
    verify: true,
  })[0] as Subject;
  const tsrPath = (options.digest === undefined ? second : first) ?? subject.defaultTsr;
  const token = readToken(await readInput(tsrPath), tsrPath);
  const { tstInfo } = token;

  const hashName = IMPRINT_HASH_NAME_BY_OID[tstInfo.messageImprint.hashAlgorithm];
  if (hashName === undefined)
    throw failed(`${tsrPath} uses hash algorithm ${tstInfo.messageImprint.hashAlgorithm}, which esign does not check`);
  const digest = hashName === 'sha256' ? await subject.sha256() : await hashFile(subject.input, hashName);
  if (!bytesEqual(digest, tstInfo.messageImprint.hashedMessage)) {
    throw failed(
      `${tsrPath} is not a timestamp of ${subject.input}: the ${hashName.toUpperCase()} of the data does not match its message imprint`,
    );
  }
  // Verification's algorithm table: a token over SHA-1 is intact but weak (exit 12), never "not validly signed".
  const signature = checkTokenSignature(token);
  if (signature.problems.length > 0) throw failed((signature.problems[0] as string).replace(/\.$/, ''));
  const imprintWeakness = digestAlgorithm(tstInfo.messageImprint.hashAlgorithm)?.weakness;
  const weak = [
    ...(imprintWeakness ? [`the message imprint is a ${hashName.toUpperCase()} digest: ${imprintWeakness}`] : []),
    ...signature.weak,
  ];
  const anchors = await trustAnchorsFor(options, ctx);
  const signer = token.signerCertificate as Uint8Array;
  try {
    verifyTsaCertificate(
      [signer, ...token.certificates.filter((der) => !bytesEqual(der, signer))],
      anchors,
      tstInfo.genTime,
    );
  } catch (error) {
    if (!isEsignError(error)) throw error;
    throw new EsignError('VERIFY_UNTRUSTED', error.message, {
      hint: 'Pass the TSA root with --ca, or set trustAnchors in the profile.',
      cause: error,
    });
  }
  if (weak.length > 0) {
    ctx.io.result(
      {
        input: subject.input,
        tsr: tsrPath,
        valid: false,
        code: 'VERIFY_WEAK_ALGORITHM',
        weak,
        imprint: { algorithm: hashName, value: Buffer.from(tstInfo.messageImprint.hashedMessage).toString('hex') },
        genTime: tstInfo.genTime.toISOString(),
        serialNumber: tstInfo.serialNumber,
        policy: tstInfo.policy,
        tsa: tstInfo.tsaName ?? null,
        chain: 'trusted',
      },
      () =>
        [
          `~ ${tsrPath} is an intact timestamp of ${subject.input}, but its algorithm is NOT ACCEPTABLE`,
          ...weak.map((line) => `  ! ${line}`),
          `  time     ${tstInfo.genTime.toISOString()}`,
          `  TSA      ${tstInfo.tsaName ?? '(not named)'}, certificate trusted`,
        ].join('\n'),
    );
    const { ExitCode } = await import('../../core/errors.js');
    process.exitCode = ExitCode.weakAlgorithm;
    ctx.io.error(`esign: VERIFY_WEAK_ALGORITHM: ${tsrPath}: ${weak[0] as string}.`);
    return;
  }
  ctx.io.result({ input: subject.input, tsr: tsrPath, valid: true, ...describeToken(tstInfo) }, () =>
    [
      `✓ ${tsrPath} is a valid timestamp of ${subject.input}`,
      `  time     ${tstInfo.genTime.toISOString()}${tstInfo.accuracy ? ` (± ${accuracyText(tstInfo)})` : ''}`,
      `  serial   ${tstInfo.serialNumber}`,
      `  policy   ${tstInfo.policy}`,
      `  TSA      ${tstInfo.tsaName ?? '(not named)'}, certificate trusted`,
    ].join('\n'),
  );
}

function describeToken(tstInfo: TstInfo): Record<string, unknown> {
  return {
    sha256: Buffer.from(tstInfo.messageImprint.hashedMessage).toString('hex'),
    genTime: tstInfo.genTime.toISOString(),
    serialNumber: tstInfo.serialNumber,
    policy: tstInfo.policy,
    accuracy: tstInfo.accuracy ?? null,
    tsa: tstInfo.tsaName ?? null,
    chain: 'trusted',
  };
}

function accuracyText(tstInfo: TstInfo): string {
  const { seconds = 0, millis = 0, micros = 0 } = tstInfo.accuracy ?? {};
  return `${seconds + millis / 1000 + micros / 1_000_000} s`;
}

/** A .tsr holds a TimeStampResp; a bare TimeStampToken (.tst) is accepted as well. */
function readToken(bytes: Uint8Array, path: string): ParsedTimeStampToken {
  let tokenDer = bytes;
  try {
    const response = readTimeStampResp(bytes);
    if (response.tokenDer === undefined) {
      const reason = rejection(response.status, response.statusString, response.failInfo);
      throw failed(`${path} holds no token: ${reason.message.replace(/\.$/, '')}`);
    }
    tokenDer = response.tokenDer;
  } catch (error) {
    if (!isEsignError(error, 'TSA_BAD_RESPONSE')) throw error;
  }
  try {
    return parseTimeStampToken(tokenDer);
  } catch (error) {
    if (!isEsignError(error, 'CMS_BAD_STRUCTURE')) throw error;
    throw new EsignError('CMS_BAD_STRUCTURE', `${path} is neither a TimeStampResp nor a timestamp token.`, {
      hint: 'Give the .tsr file esign timestamp wrote.',
      cause: error,
    });
  }
}

async function trustAnchorsFor(options: TimestampCommandOptions, ctx: Context): Promise<Uint8Array[]> {
  const paths = options.ca.length > 0 ? options.ca : ((await ctx.profile()).settings.trustAnchors ?? []);
  if (paths.length === 0) {
    throw new EsignError('VERIFY_UNTRUSTED', 'No trust anchors to check the TSA certificate against.', {
      hint: 'Pass the TSA root with --ca FILE, or set trustAnchors in the profile.',
    });
  }
  return loadTrustAnchors(paths);
}

function collect(value: string, previous: string[]): string[] {
  return [...previous, value];
}

function parseDigest(text: string): Uint8Array {
  if (!/^[0-9a-fA-F]{64}$/.test(text))
    throw usage(`--digest needs a SHA-256 as 64 hex digits, got ${JSON.stringify(text)}.`);
  return new Uint8Array(Buffer.from(text, 'hex'));
}

async function hashFile(path: string, algorithm = 'sha256'): Promise<Uint8Array> {
  const hash = createHash(algorithm);
  try {
    for await (const chunk of createReadStream(path, { highWaterMark: 1024 * 1024 })) hash.update(chunk as Buffer);
  } catch (error) {
    throw inputError(path, error);
  }
  return new Uint8Array(hash.digest());
}

async function readInput(path: string): Promise<Uint8Array> {
  try {
    return new Uint8Array(await readFile(path));
  } catch (error) {
    throw inputError(path, error);
  }
}

function usage(message: string): EsignError {
  return new EsignError('USAGE', message, { hint: 'See esign timestamp --help.' });
}

function failed(reason: string, cause?: unknown): EsignError {
  return new EsignError('VERIFY_FAILED', `Timestamp check failed: ${reason}.`, {
    hint: 'The data or the .tsr changed since it was timestamped, or they do not belong together.',
    cause,
  });
}
