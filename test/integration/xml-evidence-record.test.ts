/**
 * XML evidence records (RFC 6283, `META-INF/evidencerecord.xml`) in an ASiC-S, verified by the CLI.
 * Every input is built here: the records by our own writer (test/helpers/xml-evidence-record.ts)
 * over the sandbox TSA's tokens (`esign timestamp --digest`), the containers with Info-ZIP.
 */
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decode } from '../../src/core/cms/der.js';
import { runCli } from '../helpers/run-cli.js';
import { startTestSandbox, type TestSandbox } from '../helpers/sandbox.js';
import { tempDirForFile } from '../helpers/tmp.js';
import { timeStampElement, xmlEvidenceRecord, type XmlChainSpec } from '../helpers/xml-evidence-record.js';

let sandbox: TestSandbox;
let work: { dir: string; remove: () => Promise<void> };
let count = 0;

beforeAll(async () => {
  sandbox = await startTestSandbox({ autoApprove: true });
  work = await tempDirForFile('esign-xml-er-');
}, 120_000);
afterAll(async () => {
  await sandbox?.close();
  await work?.remove();
});

const DOCUMENT = '<?xml version="1.0"?>\n<invoice  total="42" currency="EUR"/>\n';
/** Its canonical form (Canonical XML 1.0), written out by hand: what DSS hashes for an XML data object. */
const CANONICAL = '<invoice currency="EUR" total="42"></invoice>';
const sha256 = (bytes: Uint8Array | string) => new Uint8Array(createHash('sha256').update(bytes).digest());
const node = (values: Uint8Array[]) => sha256(Buffer.concat([...values].sort(Buffer.compare)));

async function tokenOver(imprint: Uint8Array): Promise<Uint8Array> {
  const out = join(work.dir, `token-${++count}.tsr`);
  const result = await runCli(['timestamp', '--digest', Buffer.from(imprint).toString('hex'), '-o', out], {
    env: sandbox.env,
  });
  expect(result.code, result.stderr).toBe(0);
  return decode(new Uint8Array(await readFile(out)), 'TimeStampResp').items[1]!.encoded;
}

/** An ASiC-S of invoice.xml (its text `document`) and the XML record. */
async function container(record: string, document = DOCUMENT): Promise<string> {
  const dir = join(work.dir, `c${++count}`);
  await mkdir(join(dir, 'META-INF'), { recursive: true });
  await writeFile(join(dir, 'mimetype'), 'application/vnd.etsi.asic-s+zip');
  await writeFile(join(dir, 'invoice.xml'), document);
  await writeFile(join(dir, 'META-INF', 'evidencerecord.xml'), record);
  execFileSync('zip', ['-q', '-X', '-0', 'c.asics', 'mimetype'], { cwd: dir });
  execFileSync('zip', ['-q', '-X', 'c.asics', 'invoice.xml', 'META-INF/evidencerecord.xml'], { cwd: dir });
  return join(dir, 'c.asics');
}

interface RecordReport {
  name: string;
  status: string;
  covers: string[];
  problems: string[];
  reason?: string;
}
async function verify(file: string): Promise<{ record: RecordReport; warnings: string[]; text: string }> {
  const json = await runCli(['--json', 'verify', file], { env: sandbox.env });
  const report = json.json<{ evidenceRecords?: RecordReport[]; warnings?: string[] }>();
  const text = await runCli(['verify', file], { env: sandbox.env });
  return { record: report.evidenceRecords![0]!, warnings: report.warnings ?? [], text: text.stdout };
}

describe('an XML evidence record (RFC 6283) in an ASiC-S, over the sandbox TSA', () => {
  let chains: XmlChainSpec[];
  const sibling = sha256('another document archived with it');
  beforeAll(async () => {
    const hash = sha256(CANONICAL);
    const token = await tokenOver(node([hash, sibling]));
    const renewal = await tokenOver(sha256(timeStampElement(token, true)));
    chains = [{ stamps: [{ groups: [[hash, sibling]], token }, { token: renewal }] }];
  }, 60_000);

  it('covering the document (canonical), renewed once: verified, in the text and --json', async () => {
    const { record, text } = await verify(await container(xmlEvidenceRecord(chains)));
    expect(record).toMatchObject({
      name: 'META-INF/evidencerecord.xml',
      status: 'valid',
      covers: ['invoice.xml'],
      archiveTimestamps: 2,
      checked: 2,
      problems: [],
      timestamp: { valid: true },
    });
    expect(text).toContain('Evidence record META-INF/evidencerecord.xml: ✓ verified');
  });

  it('the document changed: INVALID, its hash in no tree', async () => {
    const file = await container(xmlEvidenceRecord(chains), DOCUMENT.replace('42', '4200'));
    const { record, warnings } = await verify(file);
    expect(record).toMatchObject({ status: 'invalid', covers: [] });
    expect(record.problems).toContain('its hash tree holds the hash of no file of the container');
    expect(warnings).toContainEqual(
      expect.stringMatching(/^evidence record META-INF\/evidencerecord\.xml INVALID: .*hash of no file/),
    );
  });

  it('a hash-tree value changed: INVALID (the tree no longer reduces to the imprint)', async () => {
    const [first, renewal] = chains[0]!.stamps;
    const changed = [{ stamps: [{ ...first!, groups: [[first!.groups![0]![0]!, sha256('x')]] }, renewal!] }];
    const { record } = await verify(await container(xmlEvidenceRecord(changed)));
    expect(record.status).toBe('invalid');
    expect(record.problems.join('\n')).toMatch(/^archive timestamp 1: .*imprint/m);
  });

  it("a token changed (the renewal's signature): INVALID", async () => {
    const [first, renewal] = chains[0]!.stamps;
    const token = new Uint8Array(renewal!.token);
    token[token.length - 10] = token[token.length - 10]! ^ 0x01;
    const { record } = await verify(await container(xmlEvidenceRecord([{ stamps: [first!, { token }] }])));
    expect(record.status).toBe('invalid');
    expect(record.problems.join('\n')).toMatch(/^archive timestamp 2: /m);
  });
});
