/** The real EU lists of test/fixtures/trusted-lists, read with the clock pinned where each is current. */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { LOTL_SIGNING_CERTIFICATES } from './lotl-signers.js';
import { readTrustedList } from './parse.js';
import { isExpired, stateOf } from './state.js';

const FIXTURES = join(import.meta.dirname, '..', '..', '..', 'test', 'fixtures', 'trusted-lists');
const read = (name: string) => readFileSync(join(FIXTURES, name));
const lotl = readTrustedList(read('eu-lotl.xml'), LOTL_SIGNING_CERTIFICATES, 'eu-lotl.xml');

describe('the real LOTL and national lists', () => {
  it('the LOTL verifies against the shipped certificates and points to every Member State', () => {
    expect(lotl).toMatchObject({ territory: 'EU', isLotl: true, sequenceNumber: 388, test: false });
    expect(lotl.issueDate).toBe('2026-05-22T13:16:35.000Z');
    expect(lotl.nextUpdate).toBe('2026-11-18T12:16:35.000Z');
    expect(lotl.pivots[0]).toBe('https://ec.europa.eu/tools/lotl/eu-lotl-pivot-378.xml');
    const territories = lotl.pointers.map((p) => p.territory);
    for (const territory of ['AT', 'BE', 'CY', 'DE', 'EE', 'FR', 'IE', 'IT', 'NL', 'PL']) {
      expect(territories).toContain(territory);
    }
    expect(lotl.pointers.every((p) => /xml/.test(p.mimeType) && p.signingCertificates.length > 0)).toBe(true);
  });

  it.each([
    ['AT', 42, '2020-02-26T00:00:00.000Z'],
    ['CY', 31, '2020-01-17T00:00:00.000Z'],
    ['EE', 68, '2025-12-12T12:57:48.000Z'],
    ['IE', 17, '2020-01-29T00:00:00.000Z'],
  ])('%s verifies against the certificates the LOTL gives for it', (territory, sequence, nextUpdate) => {
    const pointer = lotl.pointers.find((p) => p.territory === territory)!;
    const list = readTrustedList(read(`${territory}.xml`), pointer.signingCertificates, territory);
    expect(list).toMatchObject({ territory, isLotl: false, sequenceNumber: sequence, nextUpdate });
    expect(pointer.signingCertificates).toContain(list.signerCertificate);
    expect(list.services.length).toBeGreaterThan(0);
    const caQc = list.services.filter((s) => s.type === 'http://uri.etsi.org/TrstSvc/Svctype/CA/QC');
    expect(caQc.length).toBeGreaterThan(0);
    expect(caQc.every((s) => s.history.length > 0 && s.identity.certificates.length > 0)).toBe(true);
  });

  it("reads EE's qualifications extension: qualifiers with their criteria lists", () => {
    const pointer = lotl.pointers.find((p) => p.territory === 'EE')!;
    const list = readTrustedList(read('EE.xml'), pointer.signingCertificates, 'EE');
    const qualifications = list.services.flatMap((s) => s.history.flatMap((p) => p.qualifications));
    expect(qualifications.length).toBeGreaterThan(0);
    expect(qualifications.every((q) => q.qualifiers.every((uri) => uri.startsWith('http://uri.etsi.org/')))).toBe(true);
    expect(qualifications.some((q) => q.criteria.policySets.length > 0 || q.criteria.keyUsage.length > 0)).toBe(true);
  });

  it('is current or expired by the pinned clock', () => {
    const entry = { territory: 'EU', snapshot: lotl };
    expect(stateOf(entry, new Date('2026-06-01T00:00:00Z'))).toBe('verified');
    expect(stateOf(entry, new Date('2026-11-18T12:16:36Z'))).toBe('expired');
    expect(isExpired(lotl, new Date('2026-11-18T12:16:35Z'))).toBe(false);
    expect(stateOf({ territory: 'EU' }, new Date('2026-06-01T00:00:00Z'))).toBe('failed');
  });
});
