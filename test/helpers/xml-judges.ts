/**
 * The independent judges of an XAdES signature, for interop tests: `xmlsec1 --verify` with only the
 * sandbox root trusted, and `openssl ts -verify` of a timestamp token against the imprint a test
 * computed as EN 319 132-1 says.
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { runTool } from './pdf-judges.js';

/** `rootPem` and `dir` are read when a judge runs (the sandbox and the work folder start in beforeAll). */
export function xmlJudges(rootPem: () => string, dir: () => string) {
  return {
    /** `xmlsec1 --verify` with only the sandbox root trusted; SignedProperties' Id registered as an ID attribute. */
    xmlsecVerify(file: string, extra: string[] = []) {
      return runTool('xmlsec1', [
        '--verify',
        '--trusted-pem',
        rootPem(),
        '--id-attr:Id',
        'http://uri.etsi.org/01903/v1.3.2#:SignedProperties',
        ...extra,
        file,
      ]);
    },
    /** `openssl ts -verify` of a base64 token against `imprintHex`, with the sandbox root. */
    async opensslTsVerify(tokenBase64: string, imprintHex: string, name: string) {
      const token = join(dir(), `${name}.tst`);
      await writeFile(token, Buffer.from(tokenBase64, 'base64'));
      return runTool('openssl', [
        'ts',
        '-verify',
        '-digest',
        imprintHex,
        '-token_in',
        '-in',
        token,
        '-CAfile',
        rootPem(),
        '-partial_chain',
      ]);
    },
  };
}
