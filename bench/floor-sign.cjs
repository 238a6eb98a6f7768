// The floor of one signing run, for `npm run bench`: a bare Node script that does only what any
// client of the sandbox's PIN-only seal must do for one PDF, and nothing esign adds around it (no
// argument parsing, configuration, PDF parsing, CMS, checks or messages): credentials/info,
// credentials/authorize with the PIN and the document's hash, signatures/signHash, the input
// copied and hashed, a tail of a placeholder's size appended, fsynced and renamed into place.
// Usage: node bench/floor-sign.cjs INPUT OUTPUT, with esign's ESIGN_CONFIG_DIR (its cached service
// token, from an earlier esign run) and ESIGN_SANDBOX_DIR (the running sandbox's address).
// With --esign-requests it also makes the two requests esign makes that no bare client needs: the
// sandbox profile's health check (GET /_sandbox/health) and the CSC info (POST /csc/v1/info), so
// that the bench can tell what of esign's time is those round trips and what its own work.
'use strict';
const process = require('node:process');
const { Buffer } = require('node:buffer');
const http = require('node:http');
const { createHash } = require('node:crypto');
const { readFileSync } = require('node:fs');
const { copyFile, mkdtemp, open, rename, rm } = require('node:fs/promises');
const { dirname, join } = require('node:path');

const esignRequests = process.argv.includes('--esign-requests');
const [input, output] = process.argv.slice(2).filter((arg) => arg !== '--esign-requests');
const credentialID = 'acme-seal-bulk';
const agent = new http.Agent({ keepAlive: true });
let base;
let token;

function exchange(method, url, body) {
  return new Promise((resolve, reject) => {
    const data = Buffer.from(body === undefined ? '' : JSON.stringify(body));
    const request = http.request(
      url,
      {
        method,
        agent,
        headers: {
          authorization: `Bearer ${token}`,
          'content-type': 'application/json',
          'content-length': data.length,
        },
      },
      (response) => {
        const chunks = [];
        response.on('data', (chunk) => chunks.push(chunk));
        response.on('end', () =>
          response.statusCode === 200
            ? resolve(Buffer.concat(chunks).toString())
            : reject(new Error(`${url}: HTTP ${response.statusCode}`)),
        );
      },
    );
    request.on('error', reject);
    request.end(data);
  });
}

const post = async (path, body) => JSON.parse(await exchange('POST', `${base}/csc/v1/${path}`, body));

async function main() {
  const { urls } = JSON.parse(readFileSync(join(process.env.ESIGN_SANDBOX_DIR, 'runtime.json'), 'utf8'));
  base = urls.signing;
  const tokens = JSON.parse(readFileSync(join(process.env.ESIGN_CONFIG_DIR, 'tokens.json'), 'utf8'));
  token = Object.entries(tokens).find(([key]) => key.includes(':client-credentials:'))?.[1].accessToken;
  if (!token)
    throw new Error(
      'no client-credentials token in ESIGN_CONFIG_DIR/tokens.json: sign once with ESIGN_SERVICE_AUTH=client-credentials first',
    );
  if (esignRequests) {
    await exchange('GET', `${urls.base}/_sandbox/health`);
    await post('info', {});
  }
  await post('credentials/info', { credentialID, certificates: 'chain', certInfo: true, authInfo: true });
  const dir = await mkdtemp(join(dirname(output), '.floor-'));
  try {
    const temp = join(dir, 'out.pdf');
    const copying = copyFile(input, temp);
    const hash = createHash('sha256');
    const source = await open(input);
    const buffer = Buffer.allocUnsafe(1 << 20);
    for (let read; (read = (await source.read(buffer, 0, buffer.length)).bytesRead) > 0;)
      hash.update(buffer.subarray(0, read));
    await source.close();
    await copying;
    const digest = hash.digest('base64');
    const { SAD } = await post('credentials/authorize', {
      credentialID,
      numSignatures: 1,
      hash: [digest],
      PIN: process.env.ESIGN_CREDENTIAL_PIN,
    });
    await post('signatures/signHash', {
      credentialID,
      SAD,
      hash: [digest],
      hashAlgo: '2.16.840.1.101.3.4.2.1',
      signAlgo: '1.2.840.113549.1.1.1',
    });
    const tail = await open(temp, 'a');
    await tail.write(Buffer.alloc(17_000, 0x30));
    await tail.sync();
    await tail.close();
    await rename(temp, output);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
  agent.destroy();
}

main().catch((error) => {
  process.stderr.write(`floor-sign: ${error.message}\n`);
  process.exit(1);
});
