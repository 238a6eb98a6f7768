import { Option, type Command } from 'commander';
import { DIGEST_NAMES } from '../../core/cms/algorithms.js';
import { SIGNATURE_LEVELS } from '../../core/profile.js';
import { positiveNumber, type CommandModule } from '../command.js';
import { SIGN_FORMATS, type SignCommandOptions } from '../sign-options.js';
import { withPasswordOptions } from '../pdf-password.js';

export const defineCommand: CommandModule['defineCommand'] = (program: Command, run) => {
  const command = program
    .command('sign')
    .summary('sign PDFs (PAdES), XML (XAdES) and other files (CAdES: .p7s, .p7m; ASiC-S, ASiC-E with XAdES or CAdES)')
    .description(
      'Sign files. PDFs get a PAdES signature in an incremental update (NAME-signed.pdf); other files get a ' +
        'detached CAdES signature (NAME.p7s), or with --format p7m an enveloping one (NAME.p7m, the content inside). Every input is checked first, before any browser step; then the files ' +
        'are signed in windows — one browser approval each (up to 50 signatures), or, for seals and other explicit ' +
        'credentials, one credentials/authorize with the PIN and one-time password (ESIGN_CREDENTIAL_PIN, --pin-file, ' +
        'ESIGN_TOTP_SECRET, or asked on a terminal) — the next window prepared while the current one is signed, and ' +
        'each output written (fsynced, renamed into place) as soon as it is complete. Memory stays flat however many ' +
        'files there are. Inputs are never modified; outputs appear only when complete.',
    )
    .argument('[files...]', 'files, directories (their files) or quoted glob patterns')
    .option(
      '--require <what>',
      'qes, qeseal or qualified: sign only if the cached EU trusted lists say the credential makes a qualified ' +
        'signature (QESig), seal (QESeal) or either; refused (exit 13) before any approval or hash is sent. Or set ESIGN_REQUIRE',
    )
    .option('-c, --credential <id>', "signing credential (default: the profile's, see `esign credentials use`)")
    .addOption(
      new Option(
        '--format <format>',
        'pades (PDFs, the default for them), cades (a detached NAME.p7s, the default for other files), p7m (enveloping CAdES: NAME.p7m holds the content and its signature), asics (an ASiC-S container per file: NAME.asics), asice (one ASiC-E container of every file, directories recursively: -o bundle.asice; one approval; XAdES inside, as DigiDoc writes it), or xades (an XML file with its XAdES signature enveloped: NAME-signed.xml)',
      ).choices(SIGN_FORMATS),
    )
    .addOption(
      new Option(
        '--asic-signature <form>',
        'the signature inside a new ASiC container: xades (META-INF/signatures*.xml; the default for asice) or cades (META-INF/signature*.p7s; the default for asics). A signature added to a container takes the form it already has',
      ).choices(['xades', 'cades']),
    )
    .option(
      '--signature-policy <policy>',
      'XAdES only: sign under an explicit signature policy (XAdES-EPES): the preset facturae-3.1 (Spain’s e-invoices: its policy, the issuer’s role), or OID,URL,ALG:HASH (the policy document’s digest, base64)',
    )
    .option('-o, --output <file>', 'output file (one input only)')
    .option('--output-dir <dir>', 'write outputs into this directory (created when missing)')
    .option('-f, --force', 'replace existing local outputs')
    .addOption(
      new Option(
        '--level <level>',
        "PAdES/CAdES/XAdES baseline level: B-B, B-T (the default when a TSA is configured, else B-B), B-LT (validation data in the PDF's DSS, in the CAdES SignedData, or in the XAdES unsigned properties), B-LTA (an archive timestamp: a PDF document timestamp, a CAdES archive-time-stamp-v3, a XAdES ArchiveTimeStamp, a CAdES ASiC-E's archive manifest)",
      ).choices(SIGNATURE_LEVELS),
    )
    .addOption(
      new Option(
        '--digest <algorithm>',
        "the signature's digest, where the credential accepts it (default: the key's: SHA-256 for RSA and P-256, SHA-384 for P-384, SHA-512 for P-521)",
      ).choices(DIGEST_NAMES),
    )
    .option('--reason <text>', 'reason for signing (PDF)')
    .option('--location <text>', 'place of signing (PDF)')
    .option('--contact-info <text>', 'signer contact information (PDF)')
    .option('--name <text>', 'signer name in the signature dictionary (PDF)')
    .option(
      '--field <name>',
      'sign into this empty signature field (PDF); a name the PDF lacks makes a new field, on --page at --rect with --visible',
    )
    .option('--visible', 'draw a visible signature appearance (PDF)')
    .option('--page <n>', 'page for --visible (1 = first, -1 = last)', (text) =>
      text === '-1' ? -1 : positiveNumber(text),
    )
    .option('--rect <x1,y1,x2,y2>', 'rectangle for --visible in PDF points (default 36,36,286,106)', parseRect)
    .option(
      '--font <file>',
      "font for --visible (TrueType or OpenType: .ttf, .otf, .ttc; or WOFF), for scripts esign's font (Noto Sans: Latin, Greek, Cyrillic) lacks, e.g. CJK; repeatable: each character is drawn from the first font that has it, esign's font last",
      (file: string, files: string[] = []) => [...files, file],
    )
    .option(
      '--image <file>',
      'PNG (transparency kept) or JPEG drawn in the --visible appearance (up to 10 MiB and 4096 × 4096 pixels)',
    )
    .addOption(
      new Option('--image-position <where>', '--image beside the text (left) or behind it')
        .choices(['left', 'background'])
        .default('left'),
    )
    .option(
      '--appearance-text <template>',
      'text of the --visible appearance, with {name} {date} {reason} {location} {credential}; \\n breaks a line',
    )
    .addOption(
      new Option(
        '--certify <permissions>',
        'certify the PDF (its first signature): what may change after it — DocMDP P=1, 2 or 3',
      ).choices(['no-changes', 'form-filling', 'annotations']),
    )
    .option('--continue-on-error', 'sign the other files when one fails; report each failure')
    .option(
      '--skip-existing',
      'skip an input whose output already holds a valid signature over it by the same credential (resumes an interrupted batch); other existing outputs are refused unless --force',
    )
    .option(
      '--upload',
      'upload each output to your storage bucket as soon as it is written, also with --complete (needs `esign login --scope com.vendor.storage`)',
    )
    .option('--overwrite', 'with --upload: replace objects that already exist in the bucket (never without it)')
    .option('--prepare', 'split flow: prepare, print the approval URL (one per 50 files), save --state, and stop')
    .option('--complete', 'split flow: finish a --prepare run with --redirect-url or --code')
    .option('--state <file>', 'state file of the split flow')
    .option(
      '--redirect-url <url>',
      'with --complete (once per approval step), or --prepare after its sign-in step: the URL the browser was sent to',
      (url: string, urls: string[]) => [...urls, url],
      [] as string[],
    )
    .option('--code <code>', 'instead of --redirect-url, when there is one step: the authorization code from that URL')
    .option(
      '--pin-file <file>',
      'the PIN of an explicit credential (a seal): the first line of FILE (- for stdin); or set ESIGN_CREDENTIAL_PIN',
    );
  withPasswordOptions(command)
    .addHelpText(
      'after',
      '\nExamples:\n  esign sign contract.pdf\n  esign sign --output-dir signed/ invoices/\n  esign sign --format p7m fattura.xml                 (→ fattura.xml.p7m)\n  esign sign --format asice -o bundle.asice a.pdf docs/   (one ASiC-E container, XAdES inside)\n  esign sign --format xades invoice.xml               (→ invoice-signed.xml, enveloped XAdES)\n  esign sign --format xades --signature-policy facturae-3.1 factura.xml   (Spain’s FacturaE)\n  esign sign --auto-approve samples/contract.pdf      (sandbox)\n  esign sign --upload invoices/*.pdf                  (each output to your bucket as BASENAME)\n  esign sign --skip-existing --output-dir signed/ invoices/   (resume: signs only what is not signed yet)\n  esign sign --prepare --state s.json a.pdf b.pdf     (CI: prints the approval URL)\n  esign sign --complete --state s.json --redirect-url "http://127.0.0.1:8765/callback?code=…&state=…"\n' +
        '  ESIGN_SERVICE_AUTH=client-credentials esign sign dist/*   (a seal in CI: ESIGN_CLIENT_ID, ESIGN_CLIENT_SECRET,\n' +
        '                                                        ESIGN_CREDENTIAL, ESIGN_CREDENTIAL_PIN, ESIGN_TOTP_SECRET)',
    )
    .action((files: string[], options: SignCommandOptions, command: Command) =>
      run(command, async (ctx) => {
        const { runSign } = await import('../sign-run.js');
        await runSign(files, options, ctx);
      }),
    );
};

function parseRect(text: string): [number, number, number, number] {
  const parts = text.split(',').map((part) => Number(part.trim()));
  if (parts.length !== 4 || parts.some((part) => !Number.isFinite(part)))
    throw new Error('expected four numbers x1,y1,x2,y2');
  return parts as [number, number, number, number];
}
