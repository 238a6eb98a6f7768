/**
 * `esign extend FILE… --level B-LT|B-LTA`: raises signed files to a long-term level without a new
 * signature, through the form the file's content names (`formForExtending`): a PDF gets a DSS
 * update and for B-LTA a document timestamp appended; XAdES (an XML file, a container) gets its
 * signatures' unsigned properties grown, the output rewritten. On a B-LTA file this refreshes the
 * archive timestamp. Outputs go through a temp file and a rename (also with --in-place).
 */
import { createHash, type Hash } from 'node:crypto';
import { basename, dirname, extname, join } from 'node:path';
import { Option, type Command } from 'commander';
import { EsignError, isEsignError } from '../../core/errors.js';
import type { ExtensionResult, LongTermLevel } from '../../core/ltv/index.js';
import { copyOriginal, mapConcurrently } from '../../core/sign-workflow.js';
import type { FormReport } from '../../core/forms/form.js';
import type { Context } from '../context.js';
import { batchExitCode, type CommandModule } from '../command.js';
import { PdfPasswords, withPasswordOptions, type PdfPasswordOptions } from '../pdf-password.js';

/** Files whose shared certificates get their revocation data once. */
const EXTEND_WINDOW = 64;
/** Files extended at once within a window: one file's reads and document timestamp overlap another's. */
const EXTEND_CONCURRENCY = 4;

export interface ExtendCommandOptions extends PdfPasswordOptions {
  level: LongTermLevel;
  output?: string;
  inPlace: boolean;
  force: boolean;
  continueOnError: boolean;
}

export const defineCommand: CommandModule['defineCommand'] = (program: Command, run) => {
  const command = program
    .command('extend')
    .summary('raise signed PDFs and XAdES to B-LT or B-LTA without signing again')
    .description(
      'Add long-term validation data to signed files, keeping every signature valid. ' +
        'PDFs (PAdES), in incremental updates: B-LT, a DSS with the certificates, OCSP responses and CRLs of every signer and TSA chain (fetched from the ' +
        "URLs in the certificates); B-LTA, also a document timestamp from the profile's TSA. " +
        "XAdES (an XML file, or an ASiC-E/.bdoc/.sce or ASiC-S with XAdES), in each signature's unsigned properties: B-LT, " +
        'CertificateValues and RevocationValues of the signer and TSA chains; B-LTA, also an ArchiveTimeStamp. ' +
        "On a file that is B-LTA already, this refreshes the archive timestamp (the last one's validation data first, " +
        'then a new timestamp). The rest of the file stays byte for byte as it was.',
    )
    .argument('<files...>', 'signed PDFs, XAdES XML files, XAdES containers')
    .addOption(new Option('--level <level>', 'target level').choices(['B-LT', 'B-LTA']).default('B-LTA'))
    .option('-o, --output <file>', 'output file (one input only; default NAME-lt.EXT or NAME-lta.EXT beside it)')
    .option('--in-place', 'replace each input (through a temp file and a rename)', false)
    .option('-f, --force', 'replace existing outputs', false)
    .option('--continue-on-error', 'extend the other files when one fails; report each failure', false);
  withPasswordOptions(command)
    .addHelpText(
      'after',
      '\nExamples:\n  esign extend contract-signed.pdf                   writes contract-signed-lta.pdf\n  esign extend --level B-LT contract-signed.pdf\n  esign extend invoice-signed.xml                    writes invoice-signed-lta.xml\n  esign extend bundle.asice                          writes bundle-lta.asice\n  esign extend --in-place archive/*.pdf              refresh archive timestamps',
    )
    .action((files: string[], options: ExtendCommandOptions, command: Command) =>
      run(command, (ctx) => runExtend(files, options, ctx)),
    );
};

export function defaultOutput(input: string, level: LongTermLevel): string {
  const extension = extname(input);
  const stem = basename(input, extension);
  return join(dirname(input), `${stem}-${level === 'B-LTA' ? 'lta' : 'lt'}${extension || '.pdf'}`);
}

export async function runExtend(files: string[], options: ExtendCommandOptions, ctx: Context): Promise<void> {
  if (options.output !== undefined && options.inPlace)
    throw new EsignError('USAGE', '--output and --in-place exclude each other.', { hint: 'Choose one.' });
  if (options.output !== undefined && files.length > 1)
    throw new EsignError('USAGE', '--output works with one input only.', {
      hint: 'Drop --output to write NAME-lta.EXT beside each input, or use --in-place.',
    });
  const profile = await ctx.profile();
  const [{ createTsaClient }, { createRevocationClient }, { fileSystemDocuments }, { formForExtending }] =
    await Promise.all([
      import('../service-clients.js'),
      import('../../io/revocation-client.js'),
      import('../../io/document-files.js'),
      import('../../io/forms/registry.js'),
    ]);
  // B-LTA needs the TSA; at B-LT it stamps a B-B XAdES signature first (B-T), when the profile has one.
  const tsa = createTsaClient(ctx, profile);
  if (options.level === 'B-LTA' && !tsa) {
    throw new EsignError(
      'TSA_NOT_CONFIGURED',
      `Level B-LTA needs a timestamping service, and the profile ${JSON.stringify(profile.name)} has none.`,
      { hint: 'Set tsaUrls (esign config set tsaUrls URL), or use --level B-LT.' },
    );
  }
  const fetcher = createRevocationClient(ctx);
  // The profile's trust anchors: issuers of last resort for a chain a file leaves short of its root.
  const { loadTrustAnchors } = await import('../../io/tsa-client.js');
  const issuers = await loadTrustAnchors(profile.settings.trustAnchors ?? []);
  const passwords = await PdfPasswords.from(options, ctx);
  const { RevocationCache } = await import('../../core/ltv/index.js');
  const tokenRoom = { bytes: 0 };

  const extendOne = async (input: string, cache: InstanceType<typeof RevocationCache>): Promise<() => void> => {
    const target = options.inPlace ? input : (options.output ?? defaultOutput(input, options.level));
    const source = await fileSystemDocuments.open(input);
    try {
      const form = await formForExtending({ file: input, source });
      const output = await fileSystemDocuments.createOutput(target, { overwrite: options.inPlace || options.force });
      try {
        let copied: Promise<Hash> | undefined;
        const copy = (): Promise<Hash> => (copied ??= copyOriginal(source, output, createHash('sha256')));
        const result = await passwords.open(input, (password) =>
          form.extension.extend(source, copy, options.level, {
            fetcher,
            tsa,
            password,
            cache,
            tokenRoom,
            issuers,
            now: ctx.clock.now(),
          }),
        );
        let written: { bytes: number; sha256: string };
        if (result.rewrite) {
          // A form that rewrites (XML, a container) writes the whole output; committed the same way.
          written = await result.rewrite(output);
          await output.commit([]);
        } else {
          const hash = (await copy()).copy().update(result.tail);
          await output.commit(result.tail);
          written = { bytes: source.size + result.tail.length, sha256: hash.digest('hex') };
        }
        return () => report(ctx, input, target, options.level, form.report, result, written.bytes, written.sha256);
      } catch (error) {
        await output.abort();
        throw error;
      }
    } finally {
      await source.close();
    }
  };

  const failures: EsignError[] = [];
  let succeeded = 0;
  // In windows, like a signing batch: the certificates the files share (their signers', their TSAs')
  // get their revocation data once per window, and a few files are read, stamped and written at once.
  for (let start = 0; start < files.length; start += EXTEND_WINDOW) {
    const window = files.slice(start, start + EXTEND_WINDOW);
    const cache = new RevocationCache(fetcher, { now: () => ctx.clock.now() });
    const outcomes = await mapConcurrently(window, EXTEND_CONCURRENCY, (input) =>
      extendOne(input, cache).then(
        (reported) => ({ reported }),
        (error: unknown) => ({ error }),
      ),
    );
    // Reported in the order given; without --continue-on-error the first failure ends the run
    // once the window's files already written have been reported.
    let stop: EsignError | undefined;
    for (const [index, outcome] of outcomes.entries()) {
      if ('reported' in outcome) {
        succeeded++;
        outcome.reported();
        continue;
      }
      const input = window[index]!;
      const failure = named(input, outcome.error);
      if (!options.continueOnError || files.length === 1) {
        stop ??= failure;
        continue;
      }
      failures.push(failure);
      ctx.io.result(
        { input, error: { code: failure.code, message: failure.message, hint: failure.hint } },
        () => `✗ ${input}: ${failure.message}`,
      );
    }
    if (stop) throw stop;
  }
  if (failures.length > 0) {
    process.exitCode = batchExitCode(succeeded, failures);
    ctx.io.error(`esign: ${succeeded} of ${files.length} files extended; ${failures.length} failed (see above).`);
  }
}

function named(input: string, error: unknown): EsignError {
  if (!isEsignError(error))
    return new EsignError(
      'INTERNAL',
      `Unexpected error while extending ${input}: ${(error as Error)?.message ?? String(error)}.`,
      { cause: error },
    );
  if (error.message.includes(input)) return error;
  return new EsignError(error.code, `${input}: ${error.message}`, {
    hint: error.hint,
    cause: error,
    exitCode: error.exitCode,
    details: error.details,
  });
}

function report(
  ctx: Context,
  input: string,
  output: string,
  level: LongTermLevel,
  form: FormReport,
  result: ExtensionResult,
  bytes: number,
  sha256: string,
): void {
  for (const warning of result.warnings) ctx.io.warn(`${input}: ${warning}`);
  const format = result.format ?? form.format;
  ctx.io.result(
    {
      input,
      output,
      format,
      level,
      signatures: result.signatures,
      documentTimestamps: result.documentTimestamps,
      // Where the validation data went: the PDF's DSS, or each signature's unsigned properties.
      [form.validationDataKey]: result.added,
      ...(result.archiveTimestamp ? { archiveTimestamp: result.archiveTimestamp.toISOString() } : {}),
      revocation: result.checks,
      warnings: result.warnings,
      bytes,
      sha256,
    },
    () =>
      `✓ ${input} → ${output} (${format} ${level}: ${result.added.certs} certificates, ${result.added.ocsps} OCSP, ${result.added.crls} CRL added` +
      `${result.archiveTimestamp ? `; archive timestamp ${result.archiveTimestamp.toISOString()}` : ''})`,
  );
}
