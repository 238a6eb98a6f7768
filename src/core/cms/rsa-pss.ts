/**
 * RSASSA-PSS over a hash computed elsewhere (RFC 8017 §8.1, EMSA-PSS with MGF1 over the same hash).
 * node:crypto signs and verifies PSS only over data it hashes itself; a remote service returns a
 * signature over a hash, which esign checks here, and the sandbox signs with `signPssHash`.
 */
import {
  constants,
  createHash,
  privateEncrypt,
  publicDecrypt,
  randomBytes,
  timingSafeEqual,
  type KeyObject,
} from 'node:crypto';

export interface PssParameters {
  /** node:crypto name of the hash (also MGF1's). */
  hash: 'sha256' | 'sha384' | 'sha512';
  saltLength: number;
}

/** True when `signature` is an RSASSA-PSS signature over `hash` by the RSA `publicKey`, with exactly these parameters. */
export function verifyPssHash(
  publicKey: KeyObject,
  hash: Uint8Array,
  signature: Uint8Array,
  params: PssParameters,
): boolean {
  const decrypted = openRsaSignature(publicKey, signature, constants.RSA_NO_PADDING);
  if (!decrypted) return false;
  const emBits = decrypted.bits - 1;
  const emLength = Math.ceil(emBits / 8);
  if (decrypted.subarray(0, decrypted.length - emLength).some((byte) => byte !== 0)) return false;
  const em = decrypted.subarray(decrypted.length - emLength);
  const hashLength = hash.length;
  if (
    hashLength !== digestLength(params.hash) ||
    emLength < hashLength + params.saltLength + 2 ||
    em[emLength - 1] !== 0xbc
  )
    return false;
  const topMask = 0xff >> (8 * emLength - emBits);
  const maskedDb = em.subarray(0, emLength - hashLength - 1);
  const h = em.subarray(emLength - hashLength - 1, emLength - 1);
  if (((maskedDb[0] as number) & ~topMask) !== 0) return false;
  const db = xor(maskedDb, mgf1(h, maskedDb.length, params.hash));
  db[0] = (db[0] as number) & topMask;
  const separator = emLength - hashLength - params.saltLength - 2;
  if (db.subarray(0, separator).some((byte) => byte !== 0) || db[separator] !== 0x01) return false;
  const salt = db.subarray(db.length - params.saltLength);
  const expected = createHash(params.hash).update(new Uint8Array(8)).update(hash).update(salt).digest();
  return timingSafeEqual(expected, h);
}

/** An RSASSA-PSS signature over `hash` with an RSA private key. For the sandbox and tests. */
export function signPssHash(privateKey: KeyObject, hash: Uint8Array, params: PssParameters): Uint8Array {
  const bits = privateKey.asymmetricKeyDetails?.modulusLength;
  if (privateKey.asymmetricKeyType !== 'rsa' || bits === undefined)
    throw new RangeError('signPssHash needs an RSA private key');
  const emBits = bits - 1;
  const emLength = Math.ceil(emBits / 8);
  const hashLength = hash.length;
  const salt = randomBytes(params.saltLength);
  const h = createHash(params.hash).update(new Uint8Array(8)).update(hash).update(salt).digest();
  const db = new Uint8Array(emLength - hashLength - 1);
  db[db.length - params.saltLength - 1] = 0x01;
  db.set(salt, db.length - params.saltLength);
  const maskedDb = xor(db, mgf1(h, db.length, params.hash));
  maskedDb[0] = (maskedDb[0] as number) & (0xff >> (8 * emLength - emBits));
  const encoded = new Uint8Array(Math.ceil(bits / 8));
  encoded.set(maskedDb, encoded.length - emLength);
  encoded.set(h, encoded.length - hashLength - 1);
  encoded[encoded.length - 1] = 0xbc;
  return new Uint8Array(privateEncrypt({ key: privateKey, padding: constants.RSA_NO_PADDING }, encoded));
}

/**
 * The RSA public-key operation on a signature as long as the modulus, with `padding` removed
 * (RSA_NO_PADDING: none); undefined for another key type, another length, or a padding error.
 */
export function openRsaSignature(
  publicKey: KeyObject,
  signature: Uint8Array,
  padding: number,
): (Buffer & { bits: number }) | undefined {
  const bits = publicKey.asymmetricKeyDetails?.modulusLength;
  if (publicKey.asymmetricKeyType !== 'rsa' || bits === undefined || signature.length !== Math.ceil(bits / 8))
    return undefined;
  try {
    return Object.assign(publicDecrypt({ key: publicKey, padding }, signature), { bits });
  } catch {
    return undefined;
  }
}

export function digestLength(hash: PssParameters['hash']): number {
  return hash === 'sha256' ? 32 : hash === 'sha384' ? 48 : 64;
}

function mgf1(seed: Uint8Array, length: number, hash: string): Uint8Array {
  const out = new Uint8Array(length);
  for (let counter = 0, filled = 0; filled < length; counter++) {
    const block = createHash(hash)
      .update(seed)
      .update(Uint8Array.of(counter >>> 24, (counter >>> 16) & 0xff, (counter >>> 8) & 0xff, counter & 0xff))
      .digest();
    out.set(block.subarray(0, Math.min(block.length, length - filled)), filled);
    filled += block.length;
  }
  return out;
}

function xor(a: Uint8Array, b: Uint8Array): Uint8Array {
  return a.map((byte, index) => byte ^ (b[index] as number));
}
