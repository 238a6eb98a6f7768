import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeEach, describe, expect, it } from 'vitest';
import { listEntry } from '../../test/helpers/qualified-lists.js';
import { issueTestCertificate } from '../core/cms/test-pki.js';
import { fingerprintsNamed, indexOf } from '../core/qualification/list-index.js';
import { nameKey } from '../core/qualification/name-key.js';
import type { TrustService, TrustedListCacheEntry } from '../core/trusted-list/model.js';
import { TrustedListCache } from './trusted-list-cache.js';

const CA_QC = 'http://uri.etsi.org/TrstSvc/Svctype/CA/QC';
const TSA_QTST = 'http://uri.etsi.org/TrstSvc/Svctype/TSA/QTST';

function service(type: string, commonName: string): TrustService {
  const der = issueTestCertificate({ commonName, ca: true, keyType: 'ec' }).der;
  return {
    provider: 'Example QTSP',
    providerTradeNames: [],
    name: commonName,
    type,
    identity: {
      certificates: [Buffer.from(der).toString('base64')],
      subjectNames: [],
      subjectKeyIdentifiers: ['ABCDEF'],
    },
    history: [
      {
        status: 'http://uri.etsi.org/TrstSvc/TrustedList/Svcstatus/granted',
        from: '2016-07-01T00:00:00Z',
        additionalServiceInformation: [],
        qualifications: [],
      },
    ],
  };
}

let dir: string;
let cache: TrustedListCache;
let be: TrustedListCacheEntry;

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'esign-tl-cache-'));
  cache = new TrustedListCache(dir);
  be = { ...listEntry([service(CA_QC, 'BE Qualified CA'), service(TSA_QTST, 'BE TSA')]), etag: '"1"' };
  return () => rm(dir, { recursive: true, force: true });
});

describe('TrustedListCache indexes', () => {
  it('writes an index beside each list; reading by index leaves the list unread until asked', async () => {
    await cache.write(be);
    expect(existsSync(join(dir, 'BE.index.json'))).toBe(true);
    const [indexed, ...more] = await cache.indexed();
    expect(more).toEqual([]);
    expect(indexed!.index).toMatchObject({
      territory: 'BE',
      verified: true,
      isLotl: false,
      test: false,
      sequenceNumber: 7,
      tsa: true,
      keyIdentifiers: ['abcdef'],
      services: { total: 2, byType: { [CA_QC]: 1, [TSA_QTST]: 1 } },
    });
    expect(fingerprintsNamed(indexed!.index, nameKey('CN=be qualified  CA'))).toHaveLength(1);
    expect(indexOf(indexed!.entry)).toBe(indexed!.index);
    // Its fields read the list when asked: the same entry as written.
    expect(JSON.parse(JSON.stringify(indexed!.entry))).toEqual(be);
    expect(await cache.entries()).toEqual([be]);
  });

  it('a cache without indexes (an earlier esign) is read, and its indexes written', async () => {
    await writeFile(join(dir, 'BE.json'), JSON.stringify(be));
    const [indexed] = await cache.indexed();
    expect(indexed!.entry.snapshot).toEqual(be.snapshot);
    expect(indexed!.index.verified).toBe(true);
    expect(JSON.parse(await readFile(join(dir, 'BE.index.json'), 'utf8'))).toEqual(indexed!.index);
  });

  it('an index that no longer matches its list (replaced behind its back) is made again', async () => {
    await cache.write(be);
    const replaced = listEntry([service(CA_QC, 'Another CA')], { sequenceNumber: 8 });
    await writeFile(join(dir, 'BE.json'), JSON.stringify(replaced));
    const [indexed] = await cache.indexed();
    expect(indexed!.index.sequenceNumber).toBe(8);
    expect(indexed!.index.tsa).toBe(false);
    expect(fingerprintsNamed(indexed!.index, nameKey('CN=Another CA'))).toHaveLength(1);
    expect(fingerprintsNamed(indexed!.index, nameKey('CN=BE Qualified CA'))).toEqual([]);
  });

  it('a list that never verified is indexed as such', async () => {
    await cache.write({ territory: 'EE', lastFailure: { at: '2026-01-01T00:00:00Z', reason: 'EE: unreachable' } });
    const [indexed] = await cache.indexed();
    expect(indexed!.index).toMatchObject({ verified: false, lastFailure: { reason: 'EE: unreachable' } });
    expect(indexed!.entry.snapshot).toBeUndefined();
  });
});
