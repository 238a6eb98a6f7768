import { mkdtemp, rm } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { ListDescription } from '../core/trusted-list/build.js';
import { nationalListDescription, signedList, testSigner } from '../core/trusted-list/test-lists.js';
import { MAX_TRUSTED_LIST_BYTES } from '../core/trusted-list/xml-signature.js';
import { HttpClient } from './http.js';
import { TrustedListCache } from './trusted-list-cache.js';
import {
  addTrustedList,
  importTrustedLists,
  updateTrustedLists,
  type TrustListSources,
} from './trusted-list-update.js';

const lotlKey = testSigner('LOTL signer');
const rotatedLotlKey = testSigner('LOTL signer, rotated');
const beKey = testSigner('BE scheme operator');
const frKey = testSigner('FR scheme operator');
const stranger = testSigner('Someone else');
const ca = testSigner('Qualified CA');

/** What the test server answers, by path; `etag` enables 304s. */
const files = new Map<string, { body: string; etag: string }>();
const requests: Array<{ path: string; ifNoneMatch?: string }> = [];
let server: Server;
let base: string;
let dir: string;

beforeAll(async () => {
  server = createServer((request, response) => {
    const path = request.url ?? '';
    requests.push({
      path,
      ...(request.headers['if-none-match'] ? { ifNoneMatch: request.headers['if-none-match'] } : {}),
    });
    const file = files.get(path);
    if (!file) return void response.writeHead(404).end();
    if (request.headers['if-none-match'] === file.etag) return void response.writeHead(304).end();
    response.writeHead(200, { 'content-type': 'application/xml', etag: file.etag }).end(file.body);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

let cache: TrustedListCache;
beforeEach(async () => {
  files.clear();
  requests.length = 0;
  dir = await mkdtemp(join(tmpdir(), 'esign-tl-'));
  cache = new TrustedListCache(dir);
  return () => rm(dir, { recursive: true, force: true });
});

const sources = (overrides: Partial<TrustListSources> = {}): TrustListSources => ({
  http: new HttpClient({ sleep: async () => undefined, timeoutMs: 5000 }),
  cache,
  now: () => new Date('2026-03-01T00:00:00Z'),
  lotlSigners: [lotlKey.certificate],
  acceptTestLists: false,
  ...overrides,
});

function lotl(
  pointers: Array<[territory: string, path: string, signer: string]>,
  extra: Partial<ListDescription> = {},
) {
  return {
    territory: 'EU',
    operator: 'European Commission',
    sequenceNumber: 300,
    issueDate: new Date('2026-01-01T00:00:00Z'),
    nextUpdate: new Date('2026-07-01T00:00:00Z'),
    pointers: pointers.map(([territory, path, signer]) => ({
      territory,
      location: `${base}${path}`,
      mimeType: 'application/vnd.etsi.tsl+xml',
      signingCertificates: [signer],
    })),
    ...extra,
  };
}

function publish(path: string, body: string, etag = `"${path}-1"`): void {
  files.set(path, { body, etag });
}

describe('updateTrustedLists', () => {
  it('keeps each verified list, names each failure with its reason, and asks again conditionally', async () => {
    publish(
      '/lotl.xml',
      signedList(
        lotl([
          ['BE', '/be.xml', beKey.certificate],
          ['FR', '/fr.xml', frKey.certificate],
          ['DE', '/de.xml', stranger.certificate],
          ['NL', '/gone.xml', stranger.certificate],
        ]),
        lotlKey,
      ),
    );
    publish('/be.xml', signedList(nationalListDescription(ca.certificate), beKey));
    publish('/fr.xml', signedList(nationalListDescription(ca.certificate, { territory: 'FR' }), stranger));
    publish('/de.xml', signedList(nationalListDescription(ca.certificate, { territory: 'BE' }), stranger));

    const first = await updateTrustedLists(sources(), { lotlUrl: `${base}/lotl.xml` });
    expect(first.map((o) => [o.territory, o.state, o.code ?? null])).toEqual([
      ['EU', 'updated', null],
      ['BE', 'updated', null],
      ['FR', 'failed', 'TRUST_LIST_SIGNER_UNTRUSTED'],
      ['DE', 'failed', 'TRUST_LIST_WRONG_TERRITORY'],
      ['NL', 'failed', 'HTTP_CLIENT_ERROR'],
    ]);
    expect(first.find((o) => o.territory === 'FR')!.reason).toBe(
      'FR: the signature was not made by any certificate trusted for this list',
    );
    expect(first.find((o) => o.territory === 'NL')!.reason).toMatch(/^NL: .*gone\.xml answered HTTP 404$/);
    expect((await cache.read('BE'))!.snapshot!.sequenceNumber).toBe(12);
    expect(await cache.read('FR')).toMatchObject({ territory: 'FR', lastFailure: { reason: expect.any(String) } });
    expect((await cache.read('FR'))!.snapshot).toBeUndefined();

    requests.length = 0;
    const second = await updateTrustedLists(sources(), { lotlUrl: `${base}/lotl.xml`, territories: ['BE'] });
    expect(second.map((o) => [o.territory, o.state])).toEqual([
      ['EU', 'unchanged'],
      ['BE', 'unchanged'],
    ]);
    expect(requests).toEqual([
      { path: '/lotl.xml', ifNoneMatch: '"/lotl.xml-1"' },
      { path: '/be.xml', ifNoneMatch: '"/be.xml-1"' },
    ]);
  });

  it('never replaces a verified copy with one that fails its checks', async () => {
    publish('/lotl.xml', signedList(lotl([['BE', '/be.xml', beKey.certificate]]), lotlKey));
    publish('/be.xml', signedList(nationalListDescription(ca.certificate), beKey));
    await updateTrustedLists(sources(), { lotlUrl: `${base}/lotl.xml` });
    const verified = await cache.read('BE');

    const tampered = signedList(nationalListDescription(ca.certificate, { sequenceNumber: 13 }), beKey).replace(
      'Test QTSP',
      'Evil QTSP',
    );
    publish('/be.xml', tampered, '"be-2"');
    const outcomes = await updateTrustedLists(sources(), { lotlUrl: `${base}/lotl.xml` });
    expect(outcomes[1]).toMatchObject({ territory: 'BE', state: 'failed', code: 'TRUST_LIST_SIGNATURE_INVALID' });
    const after = await cache.read('BE');
    expect(after!.snapshot).toEqual(verified!.snapshot);
    expect(after!.lastFailure!.reason).toMatch(/^BE: a signed part was changed/);
  });

  it('stops at a LOTL that does not verify, and refuses TEST lists outside the sandbox', async () => {
    publish('/lotl.xml', signedList(lotl([['BE', '/be.xml', beKey.certificate]]), stranger));
    const [outcome, ...rest] = await updateTrustedLists(sources(), { lotlUrl: `${base}/lotl.xml` });
    expect(outcome).toMatchObject({ territory: 'EU', state: 'failed', code: 'TRUST_LIST_SIGNER_UNTRUSTED' });
    expect(rest).toEqual([]);

    publish('/lotl.xml', signedList(lotl([], { test: true }), lotlKey));
    const [test] = await updateTrustedLists(sources(), { lotlUrl: `${base}/lotl.xml` });
    expect(test!.reason).toBe(`EU: ${base}/lotl.xml is a sandbox TEST list, refused outside a sandbox profile`);
    const [accepted] = await updateTrustedLists(sources({ acceptTestLists: true }), { lotlUrl: `${base}/lotl.xml` });
    expect(accepted).toMatchObject({ state: 'updated' });
  });

  it('follows a pivot LOTL when the Commission rotated its key', async () => {
    const pivotUrl = `${base}/lotl-pivot-1.xml`;
    publish(
      '/lotl-pivot-1.xml',
      signedList(lotl([['EU', '/lotl.xml', rotatedLotlKey.certificate]], { sequenceNumber: 299 }), lotlKey),
    );
    publish(
      '/lotl.xml',
      signedList(lotl([['BE', '/be.xml', beKey.certificate]], { pivots: [pivotUrl] }), rotatedLotlKey),
    );
    const [outcome] = await updateTrustedLists(sources(), { lotlUrl: `${base}/lotl.xml`, territories: ['XX'] });
    expect(outcome).toMatchObject({ territory: 'EU', state: 'updated' });
    expect((await cache.read('EU'))!.snapshot!.signerCertificate).toBe(rotatedLotlKey.certificate);

    // A pivot signed by nobody trusted hands nothing over.
    publish('/lotl-pivot-1.xml', signedList(lotl([['EU', '/lotl.xml', rotatedLotlKey.certificate]]), stranger));
    await rm(dir, { recursive: true, force: true });
    const [refused] = await updateTrustedLists(sources(), { lotlUrl: `${base}/lotl.xml` });
    expect(refused).toMatchObject({ territory: 'EU', state: 'failed', code: 'TRUST_LIST_SIGNER_UNTRUSTED' });
  });
});

describe('updateTrustedLists: the LOTL fails where a verified copy is cached', () => {
  it('updates the national lists against the copy while it is current, and stops once it is past its next update', async () => {
    publish('/lotl.xml', signedList(lotl([['BE', '/be.xml', beKey.certificate]]), lotlKey));
    publish('/be.xml', signedList(nationalListDescription(ca.certificate), beKey));
    await updateTrustedLists(sources(), { lotlUrl: `${base}/lotl.xml` });
    const verifiedLotl = (await cache.read('EU'))!.snapshot;

    files.delete('/lotl.xml');
    publish('/be.xml', signedList(nationalListDescription(ca.certificate, { sequenceNumber: 13 }), beKey), '"be-2"');
    const outcomes = await updateTrustedLists(sources(), { lotlUrl: `${base}/lotl.xml` });
    expect(outcomes.map((o) => [o.territory, o.state, o.code ?? null])).toEqual([
      ['EU', 'failed', 'HTTP_CLIENT_ERROR'],
      ['BE', 'updated', null],
    ]);
    expect((await cache.read('EU'))!.snapshot).toEqual(verifiedLotl);
    expect((await cache.read('BE'))!.snapshot!.sequenceNumber).toBe(13);

    // Past the copy's next update (2026-07-01), its pointers no longer say who signs a list.
    const late = await updateTrustedLists(sources({ now: () => new Date('2026-08-01T00:00:00Z') }), {
      lotlUrl: `${base}/lotl.xml`,
    });
    expect(late.map((o) => [o.territory, o.state])).toEqual([['EU', 'failed']]);
  });
});

describe('updateTrustedLists: a list past the size limit', () => {
  it('is refused as it arrives, the others still updated', async () => {
    publish(
      '/lotl.xml',
      signedList(
        lotl([
          ['BE', '/be.xml', beKey.certificate],
          ['FR', '/huge.xml', frKey.certificate],
        ]),
        lotlKey,
      ),
    );
    publish('/be.xml', signedList(nationalListDescription(ca.certificate), beKey));
    publish('/huge.xml', `<x>${' '.repeat(MAX_TRUSTED_LIST_BYTES)}</x>`);
    const outcomes = await updateTrustedLists(sources(), { lotlUrl: `${base}/lotl.xml` });
    expect(outcomes.map((o) => [o.territory, o.state, o.code ?? null])).toEqual([
      ['EU', 'updated', null],
      ['BE', 'updated', null],
      ['FR', 'failed', 'HTTP_BAD_RESPONSE'],
    ]);
    expect(outcomes[2]!.reason).toBe(
      `FR: The trusted list server of FR at ${new URL(base).host} sent more than ${MAX_TRUSTED_LIST_BYTES} bytes.`,
    );
  });
});

describe('importTrustedLists', () => {
  it('recognises each file by content, LOTL first, and checks each as if fetched', async () => {
    const lotlXml = signedList(lotl([['BE', '/be.xml', beKey.certificate]]), lotlKey);
    const be = signedList(nationalListDescription(ca.certificate), beKey);
    const fr = signedList(nationalListDescription(ca.certificate, { territory: 'FR' }), frKey);
    const bytes = (text: string) => new TextEncoder().encode(text);
    const outcomes = await importTrustedLists(sources(), [
      { path: 'be.xml', bytes: bytes(be) },
      { path: 'fr.xml', bytes: bytes(fr) },
      { path: 'lotl.xml', bytes: bytes(lotlXml) },
      { path: 'notes.txt', bytes: bytes('hello') },
    ]);
    expect(outcomes.map((o) => [o.territory, o.state, o.source])).toEqual([
      ['EU', 'updated', 'lotl.xml'],
      ['BE', 'updated', 'be.xml'],
      ['FR', 'failed', 'fr.xml'],
      ['??', 'failed', 'notes.txt'],
    ]);
    expect(outcomes[2]!.reason).toBe("FR: fr.xml: no verified LOTL gives the signers of FR's list");
  });
});

describe('addTrustedList (esign trust add): a list outside the LOTL, with its own signer', () => {
  const chKey = testSigner('CH scheme operator');
  const added = () => ({ name: 'swiss-tsl', url: `${base}/ch.xml`, signerCertificates: [chKey.certificate] });

  it('is fetched, checked against its signer, cached under its name and updated with the others', async () => {
    publish('/ch.xml', signedList(nationalListDescription(ca.certificate, { territory: 'CH' }), chKey));
    expect(await addTrustedList(sources(), added())).toMatchObject({ territory: 'swiss-tsl', state: 'updated' });
    const entry = await cache.read('swiss-tsl');
    expect(entry).toMatchObject({ territory: 'swiss-tsl', added: added(), snapshot: { territory: 'CH' } });
    const indexed = (await cache.indexed()).find(({ index }) => index.territory === 'swiss-tsl');
    expect(indexed?.index.added).toEqual({ name: 'swiss-tsl', url: `${base}/ch.xml` });
    publish('/lotl.xml', signedList(lotl([['BE', '/be.xml', beKey.certificate]]), lotlKey));
    publish('/be.xml', signedList(nationalListDescription(ca.certificate), beKey));
    const outcomes = await updateTrustedLists(sources(), { lotlUrl: `${base}/lotl.xml` });
    expect(outcomes.map((o) => [o.territory, o.state])).toEqual([
      ['EU', 'updated'],
      ['BE', 'updated'],
      ['swiss-tsl', 'unchanged'],
    ]);
  });

  it('a list whose signature is not its signer’s fails, and nothing is cached', async () => {
    publish('/ch.xml', signedList(nationalListDescription(ca.certificate, { territory: 'CH' }), stranger));
    expect(await addTrustedList(sources(), added())).toMatchObject({
      state: 'failed',
      code: 'TRUST_LIST_SIGNER_UNTRUSTED',
    });
    expect(await cache.read('swiss-tsl')).toBeUndefined();
  });

  it('a list of lists is refused', async () => {
    publish('/ch.xml', signedList(lotl([['BE', '/be.xml', beKey.certificate]]), chKey));
    expect(await addTrustedList(sources(), added())).toMatchObject({
      state: 'failed',
      code: 'TRUST_LIST_WRONG_TERRITORY',
    });
  });
});
