/**
 * PAdES verification of a whole PDF: every signature and document timestamp, what each covers,
 * what was appended after it, chains and revocation (from the DSS and the CMS), and the baseline
 * level reached. Pure: the document comes through a ByteSource, time and trust anchors are passed in.
 */
import { createHash, X509Certificate } from 'node:crypto';
import type { ByteSource } from '../../ports.js';
import type { PdfDocument } from '../../pdf/document.js';
import { byteSourceFrom, readPdfFromHeader } from '../../pdf/document.js';
import { isPdfWhitespace } from '../../pdf/lexer.js';
import { PdfName, PdfRef, isName } from '../../pdf/objects.js';
import {
  listRevisions,
  readByteRange,
  listSignatureFields,
  parsePdfDate,
  readDss,
  readRevision,
  cmsPrefix,
} from '../../pdf/signatures.js';
import type { PdfDss, PdfRevision, PdfSignatureField } from '../../pdf/signatures.js';
import { checkSignatureCms, checkTimestampOver } from '../../verify/cms-check.js';
import type { CmsContext, ReadSignedBytes } from '../../verify/cms-check.js';
import { PageContentComparison } from './page-content.js';
import { revocationMaterial } from '../../verify/revocation.js';
import type { RevocationItem } from '../../verify/revocation.js';
import { codeOf, judgedQualification, noFindings, verdict, worst } from '../../verify/types.js';
import type {
  AppendedUpdate,
  ChainReport,
  PadesLevel,
  SignatureReport,
  SignatureStatus,
  VerificationReport,
  VerifyOptions,
} from '../../verify/types.js';

interface Located {
  field: PdfSignatureField;
  kind: 'signature' | 'docTimeStamp';
  signedEnd: number;
  revision: PdfRevision | undefined;
}

/** Verifies every signature and document timestamp of the PDF in `source`. */
export async function verifyPdf(input: ByteSource, file: string, options: VerifyOptions): Promise<VerificationReport> {
  // From its `%PDF-` header on, as readers take a file with leading bytes (ByteRange offsets included).
  const { source, pdf: doc } = await readPdfFromHeader(input, byteSourceFrom, { password: options.password });
  const fields = await listSignatureFields(doc);
  const base: VerificationReport = {
    file,
    kind: 'pdf',
    signatures: [],
    status: 'no-signatures',
    code: 'VERIFY_NO_SIGNATURES',
    checkedAt: options.now.toISOString(),
  };
  if (fields.length === 0) return base;

  const revisions = await listRevisions(doc);
  const dss = await readDss(doc);
  const revisionAt = (end: number): PdfRevision | undefined =>
    revisions.find((revision) => revision.eofEnd <= end && end <= revision.end);
  const docs = new Map<number, Promise<PdfDocument>>();
  const docAt = (revision: PdfRevision): Promise<PdfDocument> => {
    let pending = docs.get(revision.end);
    if (!pending)
      docs.set(
        revision.end,
        (pending =
          revision.end >= source.size
            ? Promise.resolve(doc)
            : readRevision(source, revision.end, { password: options.password })),
      );
    return pending;
  };
  // Each update is compared once with the revision before it, whichever signatures it follows.
  const pages = new PageContentComparison();
  const pageChanges = new Map<number, Promise<string[]>>();
  const pageChangesOf = (update: PdfRevision): Promise<string[]> => {
    let pending = pageChanges.get(update.number);
    if (!pending) {
      const previous = revisions[update.number - 2] as PdfRevision; // an update always has one
      pending = Promise.all([docAt(previous), docAt(update)]).then(([before, after]) =>
        pages.changes(
          { doc: before, revision: previous.number },
          { doc: after, revision: update.number },
          update.objects,
        ),
      );
      pageChanges.set(update.number, pending);
    }
    return pending;
  };
  const held = dss ? await dssRevocationItems(doc, dss, revisions, docAt) : { ocsps: [], crls: [] };
  const ctx: CmsContext = {
    anchors: options.trustAnchors.map((der) => new X509Certificate(der)),
    extraCerts: dss?.certs ?? [],
    revocation: revocationMaterial(held.ocsps, held.crls),
    now: options.now,
    ...(options.trustedLists ? { trustedLists: options.trustedLists } : {}),
    ...(options.revocation ? { revocationPolicy: options.revocation } : {}),
  };
  const dssRevision = dss ? await findDssRevision(doc, dss, revisions) : undefined;
  if (dss)
    base.dss = {
      certs: dss.certs.length,
      ocsps: dss.ocsps.length,
      crls: dss.crls.length,
      revision: dssRevision?.number ?? 0,
    };

  const located: Located[] = fields.map((field) => {
    const kind = field.subFilter === 'ETSI.RFC3161' || field.type === 'DocTimeStamp' ? 'docTimeStamp' : 'signature';
    const br = field.byteRange;
    const signedEnd = br && br.length === 4 ? (br[2] as number) + (br[3] as number) : 0;
    return { field, kind, signedEnd, revision: revisionAt(signedEnd) };
  });
  located.sort((a, b) => a.signedEnd - b.signedEnd);

  const reports: SignatureReport[] = [];
  // Later ones first: a document timestamp that passed validation proves that the signatures before
  // it existed at its time (EN 319 102-1: a proof of existence, which may be their best-signature-time).
  for (let index = located.length - 1; index >= 0; index--) {
    const item = located[index] as Located;
    const stampedAt = reports
      .filter((later) => later.kind === 'docTimeStamp' && later.integrity.valid && later.timestamp?.valid)
      .filter((later) => later.timestamp?.chain?.trusted)
      .map((later) => new Date(later.timestamp?.time ?? ''))
      .sort((a, b) => a.getTime() - b.getTime())[0];
    reports.unshift(
      await verifyOne(index + 1, item, {
        source,
        leadingBytes: input.size - source.size,
        ctx: stampedAt ? { ...ctx, proofOfExistence: async () => stampedAt } : ctx,
        revisions,
        located,
        docAt,
        pageChangesOf,
        dss,
        dssRevision,
        options,
      }),
    );
  }
  // B-LTA: a valid document timestamp over the revision that completed a B-LT signature's
  // validation data. DSS updates after it (e.g. for the timestamp's own TSA) do not matter.
  const stamped = located
    .filter((item, i) => item.kind === 'docTimeStamp' && reports[i]?.status === 'valid')
    .map((item) => item.signedEnd);
  reports.forEach((report, i) => {
    if (report.level !== 'B-LT') return;
    const used = [...(report.chain?.revocation ?? []), ...(report.timestamp?.chain?.revocation ?? [])].map(
      (entry) => entry.revision ?? 0,
    );
    const complete = revisions[Math.max(located[i]?.revision?.number ?? 0, ...used) - 1];
    if (complete && stamped.some((signedEnd) => signedEnd >= complete.eofEnd)) report.level = 'B-LTA';
  });
  const status: SignatureStatus = worst(reports.map((report) => report.status));
  return { ...base, signatures: reports, status, code: codeOf(status) };
}

/**
 * Why the certification of a certified PDF is already broken (the first problem of its signature),
 * or undefined: one that is not certified, or whose certification holds. Signing such a document is
 * the signer's choice, but a new signature does not mend it, and readers will show it broken.
 */
export async function brokenCertification(
  input: ByteSource,
  file: string,
  options: Omit<VerifyOptions, 'trustAnchors'>,
): Promise<string | undefined> {
  const report = await verifyPdf(input, file, { ...options, trustAnchors: [] });
  const certification = report.signatures.find((signature) => signature.certification !== undefined);
  return certification?.status === 'invalid' ? (certification.problems[0] ?? 'its signature is invalid') : undefined;
}

interface Shared {
  source: ByteSource;
  /** Bytes before the `%PDF-` header: read past, as readers do, but signed by nobody. */
  leadingBytes: number;
  ctx: CmsContext;
  revisions: PdfRevision[];
  located: Located[];
  docAt: (revision: PdfRevision) => Promise<PdfDocument>;
  pageChangesOf: (update: PdfRevision) => Promise<string[]>;
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
    indication: 'TOTAL-FAILED',
    subIndication: 'FORMAT_FAILURE',
    problems: [],
    warnings: [],
  };
  if (field.docMdp !== undefined) report.certification = { level: field.docMdp, permits: PERMITS[field.docMdp] };
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
  const cms = cmsPrefix(contents);
  const readSigned: ReadSignedBytes = (consume) => readByteRange(source, br, consume);
  const findings = { ...noFindings(), problems: report.problems };
  if (kind === 'signature') {
    if (
      field.subFilter &&
      !['ETSI.CAdES.detached', 'adbe.pkcs7.detached', 'adbe.pkcs7.sha1'].includes(field.subFilter)
    ) {
      report.warnings.push(`SubFilter ${field.subFilter} is not a PAdES baseline SubFilter`);
    }
    const checks = await checkSignatureCms(
      cms,
      { read: readSigned, encapsulatedSha1: field.subFilter === 'adbe.pkcs7.sha1' },
      shared.ctx,
    );
    Object.assign(report, {
      integrity: checks.integrity,
      signatureValue: checks.signatureValue,
      ...(checks.signer ? { signer: checks.signer } : {}),
      ...(checks.timestamp ? { timestamp: checks.timestamp } : {}),
      ...(checks.chain ? { chain: checks.chain } : {}),
      ...(checks.qualification ? { qualification: checks.qualification } : {}),
    });
    report.problems.push(...checks.problems);
    report.warnings.push(...checks.warnings);
    findings.untrusted.push(...checks.untrusted);
    findings.unestablished.push(...checks.unestablished);
    findings.weak.push(...checks.weak);
    for (const failure of checks.failures) findings.failures.add(failure);
  } else {
    await checkTimestampOver(cms, readSigned, shared.ctx, report, findings);
  }

  const before = report.problems.length;
  findings.modified = await coverage(item, shared, report);
  if (report.problems.length > before) findings.failures.add('SIG_CONSTRAINTS_FAILURE');
  Object.assign(report, verdict(findings));
  if (report.status === 'valid') delete report.subIndication;
  const qualification = judgedQualification(report.qualification, report);
  if (qualification) report.qualification = qualification;
  report.problems.push(
    ...findings.untrusted,
    ...findings.unestablished,
    ...findings.weak.map((weakness) => `algorithm not acceptable: ${weakness}`),
  );
  if (kind === 'signature') report.level = levelOf(report, shared);
  return report;
}

function checkByteRange(br: number[] | undefined, size: number): string | undefined {
  if (!br || br.length !== 4 || !br.every((n) => Number.isInteger(n) && n >= 0))
    return 'the /ByteRange is missing or not four non-negative integers';
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
    report.coverage = {
      wholeFile,
      revision: 0,
      revisions: revisions.length,
      signedBytes: item.signedEnd,
      appended: [],
    };
    return false;
  }
  const later = revisions.filter((candidate) => candidate.number > revision.number);
  const appended: AppendedUpdate[] = [];
  let modified = false;
  for (const update of later) appended.push(await classify(update, shared));
  if (item.field.docMdp !== undefined)
    report.problems.push(...(await forbiddenByCertification(item.field.docMdp, appended, later, shared)));
  for (const update of appended) {
    if (update.pageContentChanged)
      report.problems.push(
        `revision ${update.revision}, appended after this signature, changes page content: ${update.details.join('; ')}`,
      );
    if (update.kind === 'unsigned') {
      modified = true;
      report.warnings.push(
        `revision ${update.revision} was appended after this signature without a signature (${update.objects} object(s))`,
      );
    }
  }
  // Bytes after the last revision the cross-reference data leads to belong to no revision: damaged
  // cross-reference data, or something appended without any. Either way they are not covered.
  const knownEnd = Math.max(item.signedEnd, ...later.map((update) => update.end));
  if (!(await onlyWhitespaceAfter(source, knownEnd))) {
    modified = true;
    report.warnings.push(
      `${source.size - knownEnd} bytes after revision ${later.at(-1)?.number ?? revision.number} belong to no revision esign could read (damaged cross-reference data, or data appended without any)`,
    );
  }
  if (shared.leadingBytes > 0) {
    // poppler counts a ByteRange from the file's first byte, so it finds such a file changed too.
    modified = true;
    report.warnings.push(
      `${shared.leadingBytes} bytes before the %PDF- header are covered by no signature (added in front of the signed file)`,
    );
  }
  report.coverage = {
    wholeFile: wholeFile && shared.leadingBytes === 0,
    revision: revision.number,
    revisions: revisions.length,
    signedBytes: item.signedEnd,
    appended,
  };
  return modified;
}

const PERMITS = { 1: 'no-changes', 2: 'form-filling', 3: 'annotations' } as const;

/**
 * What revisions after a certification signature do that its DocMDP level forbids (ISO 32000-1
 * §12.8.2.2): at P=1 any signature or unsigned change; at P=2 a signature in a field that revision
 * adds, and any annotation other than a form field's widget that it adds or changes (form filling
 * — a field's value and appearance — is allowed at P=2 and 3, annotations at P=3 only). DSS updates
 * and document timestamps are allowed at every level (ETSI EN 319 142-1 §5.4); changed page
 * content and new pages are reported for every signature, certified or not.
 */
async function forbiddenByCertification(
  p: 1 | 2 | 3,
  appended: AppendedUpdate[],
  later: PdfRevision[],
  shared: Shared,
): Promise<string[]> {
  const forbidden: string[] = [];
  const level = `the certification's DocMDP P=${p} (${PERMITS[p]})`;
  for (const [i, update] of appended.entries()) {
    const revision = later[i] as PdfRevision;
    const signedHere = shared.located.find((other) => other.revision === revision && other.kind === 'signature');
    if (p === 1 && update.kind === 'signature')
      forbidden.push(
        `revision ${update.revision} adds a signature${signedHere ? ` (field "${signedHere.field.name}")` : ''}, which ${level} forbids`,
      );
    else if (p === 1 && update.kind === 'unsigned')
      forbidden.push(
        `revision ${update.revision} changes the document (${update.objects} object(s)), which ${level} forbids`,
      );
    else if (p === 2 && signedHere && signedHere.field.fieldObjectNumber !== undefined) {
      const before = await shared.docAt(shared.revisions[revision.number - 2] as PdfRevision);
      const existed = (await before.resolve(new PdfRef(signedHere.field.fieldObjectNumber, 0))) !== null;
      if (!existed)
        forbidden.push(
          `revision ${update.revision} adds the signature field "${signedHere.field.name}", a new annotation, which ${level} forbids`,
        );
    }
    if (p === 2)
      for (const annotation of [
        ...(await annotationsChanged(revision, shared)),
        ...(await annotationsRemoved(revision, shared)),
      ])
        forbidden.push(`revision ${update.revision} ${annotation}, which ${level} forbids`);
  }
  return forbidden;
}

/**
 * The annotations other than widgets that `revision` adds or changes, as "adds a Text annotation
 * (object 12)". An annotation is a dictionary with a /Rect and a /Subtype (a form XObject has a
 * /BBox instead); a widget is a form field's, which form filling may change.
 */
async function annotationsChanged(revision: PdfRevision, shared: Shared): Promise<string[]> {
  const after = await shared.docAt(revision);
  const before =
    revision.number > 1 ? await shared.docAt(shared.revisions[revision.number - 2] as PdfRevision) : undefined;
  const found: string[] = [];
  for (const num of revision.objects) {
    if (num === revision.xrefStreamObject) continue;
    const ref = new PdfRef(num, after.generationOf(num));
    const dict = await after.resolveDict(ref).catch(() => undefined);
    const subtype = dict?.get('Subtype');
    if (!dict || !(subtype instanceof PdfName) || !Array.isArray(dict.get('Rect')) || subtype.value === 'Widget')
      continue;
    const existed = before ? (await before.resolve(ref).catch(() => undefined)) != null : false;
    found.push(`${existed ? 'changes' : 'adds'} a ${subtype.value} annotation (object ${num})`);
  }
  return found;
}

/**
 * The annotations that `revision` takes off a page, as "removes a Text annotation (object 12)": an
 * object it rewrites held them before (a page's /Annots, or an /Annots array of its own) and no
 * longer does. Form filling removes none, so at P=2 any removal, a field's widget included, is one.
 */
async function annotationsRemoved(revision: PdfRevision, shared: Shared): Promise<string[]> {
  if (revision.number < 2) return [];
  const after = await shared.docAt(revision);
  const before = await shared.docAt(shared.revisions[revision.number - 2] as PdfRevision);
  const found = new Map<number, string>();
  for (const num of revision.objects) {
    if (num === revision.xrefStreamObject) continue;
    const held = await annotationRefs(before, new PdfRef(num, before.generationOf(num)));
    if (held.length === 0) continue;
    const kept = new Set((await annotationRefs(after, new PdfRef(num, after.generationOf(num)))).map((ref) => ref.num));
    for (const ref of held) {
      if (kept.has(ref.num) || found.has(ref.num)) continue;
      const subtype = (await before.resolveDict(ref).catch(() => undefined))?.get('Subtype');
      found.set(
        ref.num,
        `removes ${subtype instanceof PdfName ? `a ${subtype.value}` : 'an'} annotation (object ${ref.num})`,
      );
    }
  }
  return [...found.values()];
}

/** The annotations object `ref` lists in `doc`: a page's /Annots, or the array itself. */
async function annotationRefs(doc: PdfDocument, ref: PdfRef): Promise<PdfRef[]> {
  const object = await doc.resolve(ref).catch(() => undefined);
  if (object === undefined || object === null) return [];
  const page = await doc.resolveDict(object).catch(() => undefined);
  const list = page
    ? isName(page.get('Type'), 'Page')
      ? await doc.resolveArray(page.get('Annots')).catch(() => undefined)
      : undefined
    : Array.isArray(object)
      ? object
      : undefined;
  const refs = (list ?? []).filter((item): item is PdfRef => item instanceof PdfRef);
  if (page) return refs;
  // An array of its own counts only when what it holds are annotations (not, say, a /Kids array).
  const annotations = await Promise.all(
    refs.map(async (item) => Array.isArray((await doc.resolveDict(item).catch(() => undefined))?.get('Rect'))),
  );
  return refs.length > 0 && annotations.every(Boolean) ? refs : [];
}

/** Whether nothing but white space (an editor's trailing newlines) follows `offset`. */
async function onlyWhitespaceAfter(source: ByteSource, offset: number): Promise<boolean> {
  const rest = source.size - offset;
  if (rest <= 0) return true;
  if (rest > 1024) return false;
  return (await source.read(offset, rest)).every(isPdfWhitespace);
}

async function classify(update: PdfRevision, shared: Shared): Promise<AppendedUpdate> {
  const objects = update.objects.filter((num) => num !== update.xrefStreamObject);
  const signedHere = shared.located.find((other) => other.revision === update);
  const details = await shared.pageChangesOf(update);
  let kind: AppendedUpdate['kind'];
  if (signedHere) kind = signedHere.kind;
  else {
    const catalog = (await (await shared.docAt(update)).catalog()).ref.num;
    const dss = shared.dss;
    const allowed = new Set<number>([catalog, ...(dss?.objects ?? [])]);
    if (dss?.objectNumber !== undefined) allowed.add(dss.objectNumber);
    const touchesDss = dss !== undefined && objects.some((num) => num === dss.objectNumber || dss.objects.has(num));
    kind = touchesDss && objects.every((num) => allowed.has(num)) ? 'dss' : 'unsigned';
  }
  return { revision: update.number, kind, objects: objects.length, pageContentChanged: details.length > 0, details };
}

/**
 * The final DSS's OCSP responses and CRLs, oldest first, each with the revision whose DSS first
 * held it: the DSS is read as it was after each revision that rewrote it or the catalog.
 */
async function dssRevocationItems(
  doc: PdfDocument,
  dss: PdfDss,
  revisions: PdfRevision[],
  docAt: (revision: PdfRevision) => Promise<PdfDocument>,
): Promise<{ ocsps: RevocationItem[]; crls: RevocationItem[] }> {
  const digest = (der: Uint8Array): string => createHash('sha256').update(der).digest('hex');
  const kept = new Set([...dss.ocsps, ...dss.crls].map(digest));
  const structure = new Set([(await doc.catalog()).ref.num, ...dss.objects]);
  if (dss.objectNumber !== undefined) structure.add(dss.objectNumber);
  const held = { ocsps: [] as RevocationItem[], crls: [] as RevocationItem[] };
  const seen = new Set<string>();
  for (const revision of revisions) {
    if (!revision.objects.some((num) => structure.has(num))) continue;
    const at = await docAt(revision);
    const then = at === doc ? dss : await readDss(at);
    for (const key of ['ocsps', 'crls'] as const) {
      for (const der of then?.[key] ?? []) {
        const id = digest(der);
        if (!kept.has(id) || seen.has(id)) continue;
        seen.add(id);
        held[key].push({ der, store: 'dss', revision: revision.number });
      }
    }
  }
  return held;
}

async function findDssRevision(
  doc: PdfDocument,
  dss: PdfDss,
  revisions: PdfRevision[],
): Promise<PdfRevision | undefined> {
  const num = dss.objectNumber ?? (await doc.catalog()).ref.num;
  return [...revisions].reverse().find((revision) => revision.objects.includes(num));
}

function revocationCovered(chain: ChainReport | undefined): string[] {
  if (!chain) return ['no certificate chain'];
  if (!chain.trusted) return ['the chain does not reach a trust anchor'];
  return chain.revocation
    .filter((entry) => entry.source === 'none' || entry.source.startsWith('fetched-'))
    .map((entry) => entry.subject);
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
