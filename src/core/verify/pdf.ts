/**
 * PAdES verification of a whole PDF: every signature and document timestamp, what each covers,
 * what was appended after it, chains and revocation from the DSS, and the baseline level reached.
 * Pure: the document comes through a ByteSource, time and trust anchors are passed in.
 */
import { X509Certificate } from 'node:crypto';
import { parseTimeStampToken } from '../tsp/response.js';
import { HASH_NAME_BY_OID } from '../cms/oids.js';
import type { ByteSource } from '../ports.js';
import type { PdfDocument } from '../pdf/document.js';
import { readPdf } from '../pdf/document.js';
import {
  hashByteRange,
  listRevisions,
  listSignatureFields,
  parsePdfDate,
  readDss,
  readPageContents,
  readRevision,
  trimDer,
} from '../pdf/signatures.js';
import type { PageContents, PdfDss, PdfRevision, PdfSignatureField } from '../pdf/signatures.js';
import { checkSignatureCms, checkTimestampToken } from './cms-check.js';
import type { CmsContext } from './cms-check.js';
import { revocationMaterial } from './revocation.js';
import { codeOf, worst } from './types.js';
import type { AppendedUpdate, ChainReport, PadesLevel, SignatureReport, SignatureStatus, VerificationReport, VerifyOptions } from './types.js';

interface Located {
  field: PdfSignatureField;
  kind: 'signature' | 'docTimeStamp';
  signedEnd: number;
  revision: PdfRevision | undefined;
}

/** Verifies every signature and document timestamp of the PDF in `source`. */
export async function verifyPdf(source: ByteSource, file: string, options: VerifyOptions): Promise<VerificationReport> {
  const doc = await readPdf(source);
  const fields = await listSignatureFields(doc);
  const base: VerificationReport = { file, kind: 'pdf', signatures: [], status: 'no-signatures', code: 'VERIFY_NO_SIGNATURES', checkedAt: options.now.toISOString() };
  if (fields.length === 0) return base;

  const revisions = await listRevisions(doc);
  const dss = await readDss(doc);
  const ctx: CmsContext = {
    anchors: options.trustAnchors.map((der) => new X509Certificate(der)),
    extraCerts: dss?.certs ?? [],
    revocation: revocationMaterial(dss?.ocsps ?? [], dss?.crls ?? []),
    now: options.now,
  };
  const revisionAt = (end: number): PdfRevision | undefined => revisions.find((revision) => revision.eofEnd <= end && end <= revision.end);
  const docs = new Map<number, Promise<PdfDocument>>();
  const docAt = (revision: PdfRevision): Promise<PdfDocument> => {
    let pending = docs.get(revision.end);
    if (!pending) docs.set(revision.end, (pending = revision.end >= source.size ? Promise.resolve(doc) : readRevision(source, revision.end)));
    return pending;
  };
  const dssRevision = dss ? await findDssRevision(doc, dss, revisions) : undefined;
  if (dss) base.dss = { certs: dss.certs.length, ocsps: dss.ocsps.length, crls: dss.crls.length, revision: dssRevision?.number ?? 0 };

  const located: Located[] = fields.map((field) => {
    const kind = field.subFilter === 'ETSI.RFC3161' || field.type === 'DocTimeStamp' ? 'docTimeStamp' : 'signature';
    const br = field.byteRange;
    const signedEnd = br && br.length === 4 ? (br[2] as number) + (br[3] as number) : 0;
    return { field, kind, signedEnd, revision: revisionAt(signedEnd) };
  });
  located.sort((a, b) => a.signedEnd - b.signedEnd);

  const reports: SignatureReport[] = [];
  for (const [index, item] of located.entries()) {
    reports.push(await verifyOne(index + 1, item, { source, ctx, revisions, located, docAt, dss, dssRevision, options }));
  }
  // B-LTA: a valid document timestamp covering the DSS revision raises B-LT signatures.
  if (dssRevision) {
    const archived = reports.some((report, i) => report.kind === 'docTimeStamp' && report.status === 'valid' && (located[i]?.signedEnd ?? 0) >= dssRevision.eofEnd);
    for (const report of reports) if (report.level === 'B-LT' && archived) report.level = 'B-LTA';
  }
  const status: SignatureStatus = worst(reports.map((report) => report.status));
  return { ...base, signatures: reports, status, code: codeOf(status) };
}

interface Shared {
  source: ByteSource;
  ctx: CmsContext;
  revisions: PdfRevision[];
  located: Located[];
  docAt: (revision: PdfRevision) => Promise<PdfDocument>;
  dss: PdfDss | undefined;
  dssRevision: PdfRevision | undefined;
  options: VerifyOptions;
}

async function verifyOne(index: number, item: Located, shared: Shared): Promise<SignatureReport> {
  const { field, kind } = item;
  const { source } = shared;
  const report: SignatureReport = {
    index,
    kind,
    field: field.name,
    ...(field.subFilter ? { subFilter: field.subFilter } : {}),
    integrity: { valid: false, digestAlgorithm: 'sha256' },
    signatureValue: { valid: false, algorithm: 'unknown' },
    status: 'invalid',
    code: 'VERIFY_FAILED',
    problems: [],
    warnings: [],
  };
  if (field.signingTime) {
    const date = parsePdfDate(field.signingTime);
    report.claimedTime = date ? date.toISOString() : field.signingTime;
  }
  const br = field.byteRange;
  const contents = field.contents;
  const byteRangeProblem = checkByteRange(br, source.size);
  if (byteRangeProblem || !br || !contents) {
    report.problems.push(byteRangeProblem ?? 'the signature dictionary has no /Contents');
    return report;
  }
  const cms = trimDer(contents);
  const untrusted: string[] = [];
  if (kind === 'signature') {
    if (field.subFilter && !['ETSI.CAdES.detached', 'adbe.pkcs7.detached'].includes(field.subFilter)) {
      report.warnings.push(`SubFilter ${field.subFilter} is not a PAdES baseline SubFilter`);
    }
    const checks = await checkSignatureCms(cms, (hashName) => hashByteRange(source, br, hashName), shared.ctx);
    Object.assign(report, {
      integrity: checks.integrity,
      signatureValue: checks.signatureValue,
      ...(checks.signer ? { signer: checks.signer } : {}),
      ...(checks.timestamp ? { timestamp: checks.timestamp } : {}),
      ...(checks.chain ? { chain: checks.chain } : {}),
    });
    report.problems.push(...checks.problems);
    report.warnings.push(...checks.warnings);
    untrusted.push(...checks.untrusted);
  } else {
    let hashName = 'sha256';
    try {
      hashName = HASH_NAME_BY_OID[parseTimeStampToken(cms).tstInfo.messageImprint.hashAlgorithm] ?? 'sha256';
    } catch {
      // checkTimestampToken reports the unreadable token
    }
    const imprint = await hashByteRange(source, br, hashName);
    const timestamp = checkTimestampToken(cms, imprint, shared.ctx);
    report.timestamp = timestamp;
    report.integrity = { valid: !timestamp.problems.some((p) => p.includes('imprint')), digestAlgorithm: hashName };
    if (!report.integrity.valid) report.integrity.reason = 'the message imprint does not match the signed bytes: the document was changed';
    report.signatureValue = { valid: !timestamp.problems.some((p) => p.includes('not validly signed') || p.includes('unreadable')), algorithm: 'timestamp token' };
    if (timestamp.chain) report.chain = timestamp.chain;
    report.problems.push(...timestamp.problems);
    if (timestamp.chain && !timestamp.chain.trusted) untrusted.push(...timestamp.chain.problems.map((p) => `timestamp authority: ${p}`));
  }

  const modified = await coverage(item, shared, report);
  if (report.problems.length > 0) report.status = 'invalid';
  else if (untrusted.length > 0) report.status = 'untrusted';
  else if (modified) report.status = 'modified';
  else report.status = 'valid';
  report.problems.push(...untrusted);
  report.code = codeOf(report.status);
  if (kind === 'signature') report.level = levelOf(report, shared);
  return report;
}

function checkByteRange(br: number[] | undefined, size: number): string | undefined {
  if (!br || br.length !== 4 || !br.every((n) => Number.isInteger(n) && n >= 0)) return 'the /ByteRange is missing or not four non-negative integers';
  const [a, b, c, d] = br as [number, number, number, number];
  if (a !== 0) return 'the /ByteRange does not start at the beginning of the file';
  if (c < b) return 'the /ByteRange ranges overlap';
  if (c + d > size) return 'the /ByteRange reaches beyond the end of the file';
  return undefined;
}

/** Fills `report.coverage`; returns whether unsigned changes were appended after the signature. */
async function coverage(item: Located, shared: Shared, report: SignatureReport): Promise<boolean> {
  const { source, revisions } = shared;
  const revision = item.revision;
  const wholeFile = item.signedEnd === source.size;
  if (!revision) {
    report.problems.push('the signed bytes do not end at a revision boundary');
    report.coverage = { wholeFile, revision: 0, revisions: revisions.length, signedBytes: item.signedEnd, appended: [] };
    return false;
  }
  const later = revisions.filter((candidate) => candidate.number > revision.number);
  const appended: AppendedUpdate[] = [];
  let before: PageContents | undefined;
  let modified = false;
  for (const update of later) {
    before ??= await readPageContents(await shared.docAt(revision));
    appended.push(await classify(update, before, shared));
  }
  for (const update of appended) {
    if (update.pageContentChanged) report.problems.push(`revision ${update.revision}, appended after this signature, changes page content: ${update.details.join('; ')}`);
    if (update.kind === 'unsigned') {
      modified = true;
      report.warnings.push(`revision ${update.revision} was appended after this signature without a signature (${update.objects} object(s))`);
    }
  }
  report.coverage = { wholeFile, revision: revision.number, revisions: revisions.length, signedBytes: item.signedEnd, appended };
  return modified;
}

async function classify(update: PdfRevision, before: PageContents, shared: Shared): Promise<AppendedUpdate> {
  const objects = update.objects.filter((num) => num !== update.xrefStreamObject);
  const signedHere = shared.located.find((other) => other.revision === update);
  const after = await shared.docAt(update);
  const details: string[] = [];
  let pageContentChanged = false;
  const touched = objects.filter((num) => before.pages.has(num) || before.contentObjects.has(num));
  if (touched.length > 0) {
    const now = await readPageContents(after);
    for (const num of touched) {
      if (before.contentObjects.has(num)) {
        pageContentChanged = true;
        details.push(`content stream object ${num} redefined`);
      } else if (now.pages.get(num) !== before.pages.get(num)) {
        pageContentChanged = true;
        details.push(`page object ${num} has new /Contents (${now.pages.get(num) ?? 'removed'})`);
      }
    }
  }
  let kind: AppendedUpdate['kind'];
  if (signedHere) kind = signedHere.kind;
  else {
    const catalog = (await after.catalog()).ref.num;
    const dss = shared.dss;
    const allowed = new Set<number>([catalog, ...(dss?.objects ?? [])]);
    if (dss?.objectNumber !== undefined) allowed.add(dss.objectNumber);
    const touchesDss = dss !== undefined && objects.some((num) => num === dss.objectNumber || dss.objects.has(num));
    kind = touchesDss && objects.every((num) => allowed.has(num)) ? 'dss' : 'unsigned';
  }
  return { revision: update.number, kind, objects: objects.length, pageContentChanged, details };
}

async function findDssRevision(doc: PdfDocument, dss: PdfDss, revisions: PdfRevision[]): Promise<PdfRevision | undefined> {
  const num = dss.objectNumber ?? (await doc.catalog()).ref.num;
  return [...revisions].reverse().find((revision) => revision.objects.includes(num));
}

function revocationCovered(chain: ChainReport | undefined): string[] {
  if (!chain) return ['no certificate chain'];
  if (!chain.trusted) return ['the chain does not reach a trust anchor'];
  return chain.revocation.filter((entry) => entry.source === 'none').map((entry) => entry.subject);
}

function levelOf(report: SignatureReport, shared: Shared): PadesLevel | undefined {
  if (!report.integrity.valid || !report.signatureValue.valid) return undefined;
  if (!report.timestamp?.valid) return 'B-B';
  if (!shared.dss || !shared.dssRevision) return 'B-T';
  const missing = [
    ...revocationCovered(report.chain).map((subject) => `signer chain: ${subject}`),
    ...revocationCovered(report.timestamp.chain).map((subject) => `timestamp authority chain: ${subject}`),
  ];
  if (missing.length > 0) {
    report.warnings.push(`B-LT not reached: the DSS lacks revocation data for ${missing.join('; ')}`);
    return 'B-T';
  }
  return 'B-LT';
}

export type { SignatureStatus };
