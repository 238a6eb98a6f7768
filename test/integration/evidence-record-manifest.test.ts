/**
 * Evidence records (RFC 4998) as DSS writes them in an ASiC: with an ASiCEvidenceRecordManifest
 * naming what the record covers (EN 319 162-1), without a hash tree, in a container with no
 * `mimetype` at all. Every input is built here: the records by hand over the sandbox TSA's tokens
 * (`esign timestamp --digest`), the manifests with our builder, the ZIPs with Info-ZIP.
 */
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decode, objectIdentifier, octetString, sequence, smallInteger, tlv } from '../../src/core/cms/der.js';
import { buildManifest } from '../../src/core/forms/asic-e/manifest.js';
import { runCli } from '../helpers/run-cli.js';
import { startTestSandbox, type TestSandbox } from '../helpers/sandbox.js';
import { tempDirForFile } from '../helpers/tmp.js';

let sandbox: TestSandbox;
let work: { dir: string; remove: () => Promise<void> };
let containers = 0;

beforeAll(async () => {
  sandbox = await startTestSandbox({ autoApprove: true });
  work = await tempDirForFile('esign-er-manifest-');
}, 120_000);
afterAll(async () => {
  await sandbox?.close();
  await work?.remove();
});

const SHA256 = '2.16.840.1.101.3.4.2.1';
const SHA512 = '2.16.840.1.101.3.4.2.3';
const FILES = { 'invoice.txt': 'invoice 42\n', 'terms.txt': 'terms of sale\n' };
const sha256 = (bytes: Uint8Array | string) => new Uint8Array(createHash('sha256').update(bytes).digest());

/** A timestamp token over `imprint` from the sandbox TSA, out of its TimeStampResp. */
async function tokenOver(imprint: Uint8Array): Promise<Uint8Array> {
  const out = join(work.dir, `token-${++containers}.tsr`);
  const result = await runCli(['timestamp', '--digest', Buffer.from(imprint).toString('hex'), '-o', out], {
    env: sandbox.env,
  });
  expect(result.code, result.stderr).toBe(0);
  return decode(new Uint8Array(await readFile(out)), 'TimeStampResp').items[1]!.encoded;
}

/** An EvidenceRecord listing `digests`, of one ArchiveTimeStamp with the reduced hash tree `groups` (none: no tree) over `root`. */
async function evidenceRecord(
  groups: Uint8Array[][] | undefined,
  root: Uint8Array,
  digests = [SHA256],
): Promise<Uint8Array> {
  const tree = groups ? [tlv(0xa2, ...groups.map((group) => sequence(...group.map(octetString))))] : [];
  return sequence(
    smallInteger(1),
    sequence(...digests.map((oid) => sequence(objectIdentifier(oid)))),
    sequence(sequence(sequence(...tree, await tokenOver(root)))),
  );
}

/** The record over both files: a tree of their two hashes, stamped over its root (RFC 4998 §4.2). */
async function recordOverBoth(digests = [SHA256]): Promise<Uint8Array> {
  const hashes = Object.values(FILES).map((text) => sha256(text));
  const root = sha256(Buffer.concat([...hashes].sort((a, b) => Buffer.compare(a, b))));
  return evidenceRecord([hashes], root, digests);
}

function manifestOver(record: string, digest: 'sha256' | 'sha512' = 'sha256', names = Object.keys(FILES)): Uint8Array {
  return buildManifest({
    signature: record,
    signatureMimeType: 'application/vnd.etsi.ers',
    references: Object.entries(FILES)
      .filter(([name]) => names.includes(name))
      .map(([name, text]) => ({
        name,
        mimeType: 'text/plain',
        digest,
        digestValue: new Uint8Array(createHash(digest).update(text).digest()),
      })),
  });
}

/** An ASiC-E (mimetype first, or none) of the two files, `META-INF/` entries as given; `changed` replaces a file's text. */
async function container(
  meta: Record<string, Uint8Array>,
  { mimetype = true, changed = {} as Record<string, string> } = {},
): Promise<string> {
  const dir = join(work.dir, `c${++containers}`);
  await mkdir(join(dir, 'META-INF'), { recursive: true });
  const files = { ...FILES, ...changed };
  for (const [name, text] of Object.entries(files)) await writeFile(join(dir, name), text);
  for (const [name, bytes] of Object.entries(meta)) await writeFile(join(dir, 'META-INF', name), bytes);
  if (mimetype) {
    await writeFile(join(dir, 'mimetype'), 'application/vnd.etsi.asic-e+zip');
    execFileSync('zip', ['-q', '-X', '-0', 'c.asice', 'mimetype'], { cwd: dir });
  }
  const entries = [...Object.keys(files), ...Object.keys(meta).map((name) => `META-INF/${name}`)];
  execFileSync('zip', ['-q', '-X', 'c.asice', ...entries], { cwd: dir });
  return join(dir, 'c.asice');
}

interface RecordReport {
  name: string;
  status: string;
  covers: string[];
  problems: string[];
}
async function records(file: string): Promise<{ records: RecordReport[]; warnings: string[]; text: string }> {
  const json = await runCli(['--json', 'verify', file], { env: sandbox.env });
  const report = json.json<{ evidenceRecords?: RecordReport[]; warnings?: string[] }>();
  const text = await runCli(['verify', file], { env: sandbox.env });
  return { records: report.evidenceRecords ?? [], warnings: report.warnings ?? [], text: text.stdout };
}

describe('an evidence record with its ASiCEvidenceRecordManifest (EN 319 162-1, as DSS writes it)', () => {
  it('covers the files the manifest names: verified, in --json', async () => {
    const file = await container({
      'evidencerecord.ers': await recordOverBoth(),
      'ASiCEvidenceRecordManifest.xml': manifestOver('META-INF/evidencerecord.ers'),
    });
    const { records: found, text } = await records(file);
    expect(found).toEqual([
      expect.objectContaining({
        name: 'META-INF/evidencerecord.ers',
        status: 'valid',
        covers: ['invoice.txt', 'terms.txt'],
        problems: [],
      }),
    ]);
    // The text of a container with no signature says only "no signatures" (src/cli/commands/verify.ts `human`,
    // another helper's file): its records are in --json; the text is asserted where a signature is beside them.
    expect(text).toMatch(/no signatures/);
  });

  it('a file the manifest names changed: INVALID, naming it; one gone: INVALID, naming it', async () => {
    const meta = {
      'evidencerecord.ers': await recordOverBoth(),
      'ASiCEvidenceRecordManifest.xml': manifestOver('META-INF/evidencerecord.ers'),
    };
    const changed = await records(await container(meta, { changed: { 'terms.txt': 'terms of sale, changed\n' } }));
    expect(changed.records[0]).toMatchObject({ status: 'invalid' });
    expect(changed.records[0]!.problems).toContainEqual(
      'terms.txt was changed: its sha256 is not the one META-INF/ASiCEvidenceRecordManifest.xml gives',
    );
    expect(changed.warnings).toContainEqual(
      expect.stringMatching(/^evidence record META-INF\/evidencerecord\.ers INVALID: .*terms\.txt was changed/),
    );
    const dir = join(work.dir, `gone-${++containers}`);
    await mkdir(join(dir, 'META-INF'), { recursive: true });
    await writeFile(join(dir, 'invoice.txt'), FILES['invoice.txt']);
    for (const [name, bytes] of Object.entries(meta)) await writeFile(join(dir, 'META-INF', name), bytes);
    await writeFile(join(dir, 'mimetype'), 'application/vnd.etsi.asic-e+zip');
    execFileSync('zip', ['-q', '-X', '-0', 'g.asice', 'mimetype'], { cwd: dir });
    execFileSync('zip', ['-q', '-X', 'g.asice', 'invoice.txt', 'META-INF/evidencerecord.ers'], { cwd: dir });
    execFileSync('zip', ['-q', '-X', 'g.asice', 'META-INF/ASiCEvidenceRecordManifest.xml'], { cwd: dir });
    const gone = await records(join(dir, 'g.asice'));
    expect(gone.records[0]).toMatchObject({ status: 'invalid' });
    expect(gone.records[0]!.problems).toContainEqual(
      'META-INF/ASiCEvidenceRecordManifest.xml names terms.txt, which the container does not hold',
    );
  });

  it('a manifest digest in another algorithm than the record hashes with: INVALID (as DSS: not intact)', async () => {
    const file = await container({
      'evidencerecord.ers': await recordOverBoth(),
      'ASiCEvidenceRecordManifest.xml': manifestOver('META-INF/evidencerecord.ers', 'sha512'),
    });
    const { records: found } = await records(file);
    expect(found[0]!.status).toBe('invalid');
    expect(found[0]!.problems.join('\n')).toMatch(
      /gives invoice\.txt a sha512 digest, an algorithm the record does not hash with \(sha256\)/,
    );
  });

  it("a record whose digestAlgorithms leaves out its timestamp's algorithm: INVALID", async () => {
    const file = await container({
      'evidencerecord.ers': await recordOverBoth([SHA512]),
      'ASiCEvidenceRecordManifest.xml': manifestOver('META-INF/evidencerecord.ers'),
    });
    const { records: found } = await records(file);
    expect(found[0]).toMatchObject({ status: 'invalid' });
    expect(found[0]!.problems.join('\n')).toMatch(/hashes with sha256, which the record's digestAlgorithms \(sha512\)/);
  });

  it('a record without a hash tree covers the one file whose hash its timestamp holds; over another: INVALID', async () => {
    const manifest = manifestOver('META-INF/evidencerecord.ers', 'sha256', ['terms.txt']);
    const file = await container({
      'evidencerecord.ers': await evidenceRecord(undefined, sha256(FILES['terms.txt']!)),
      'ASiCEvidenceRecordManifest.xml': manifest,
    });
    const { records: found } = await records(file);
    expect(found).toEqual([expect.objectContaining({ status: 'valid', covers: ['terms.txt'] })]);
    const elsewhere = await container({
      'evidencerecord.ers': await evidenceRecord(undefined, sha256('other\n')),
      'ASiCEvidenceRecordManifest.xml': manifest,
    });
    const other = await records(elsewhere);
    expect(other.records[0]).toMatchObject({ status: 'invalid', covers: [] });
    expect(other.records[0]!.problems.join('\n')).toMatch(/holds the hash of no file of the container/);
  });

  it('in an ASiC-E, a record no manifest names covers nothing: INVALID, said (as DSS: its data objects not found)', async () => {
    const file = await container({ 'evidencerecord.ers': await recordOverBoth() });
    const { records: found } = await records(file);
    expect(found[0]).toMatchObject({ status: 'invalid', covers: [] });
    expect(found[0]!.problems).toContainEqual(
      "an ASiC-E's evidence record covers what its ASiCEvidenceRecordManifest names (EN 319 162-1), and no META-INF/ASiCEvidenceRecordManifest*.xml names META-INF/evidencerecord.ers",
    );
  });

  it('in a container with no mimetype (as 11 of DSS’s record containers): read as ASiC-E, said in a warning, record verified', async () => {
    const file = await container(
      {
        'evidencerecord.ers': await recordOverBoth(),
        'ASiCEvidenceRecordManifest.xml': manifestOver('META-INF/evidencerecord.ers'),
      },
      { mimetype: false },
    );
    const json = await runCli(['--json', 'verify', file], { env: sandbox.env });
    // Only evidence, no signature: exit 9, VERIFY_NO_SIGNATURES, the record reported and verified.
    expect(json.code).toBe(9);
    const report = json.json<{
      code: string;
      packaging: string;
      warnings: string[];
      evidenceRecords: RecordReport[];
    }>();
    expect(report).toMatchObject({
      code: 'VERIFY_NO_SIGNATURES',
      packaging: 'asic-e',
      evidenceRecords: [{ status: 'valid', covers: ['invoice.txt', 'terms.txt'] }],
    });
    expect(report.warnings).toContain(
      'the container has no "mimetype" entry (EN 319 162-1 A.1), read as ASiC-E by its 2 documents (evidence: META-INF/evidencerecord.ers)',
    );
  });
});
