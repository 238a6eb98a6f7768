/**
 * ECDSA over a hash computed elsewhere (FIPS 186-4 §6.4), on P-256, P-384 and P-521. node:crypto
 * signs and verifies only data it hashes itself, while a remote signing service returns a signature
 * over a hash: esign checks each one here before use, and the sandbox signs with it. Signature values
 * are DER `Ecdsa-Sig-Value` (RFC 5480) or raw `r||s` (IEEE P1363), converted either way.
 */
import { randomBytes, type KeyObject } from 'node:crypto';
import { Asn1StructureError, decode, integerBytes, sequence, sequenceItems, unsignedInteger } from './der.js';

export type CurveName = 'P-256' | 'P-384' | 'P-521';

interface Curve {
  p: bigint;
  b: bigint;
  n: bigint;
  g: Affine;
  /** Bytes of a coordinate and of r or s in P1363. */
  size: number;
  bits: number;
}

interface Affine {
  x: bigint;
  y: bigint;
}

/** Jacobian coordinates; Z = 0 is the point at infinity. */
interface Jacobian {
  x: bigint;
  y: bigint;
  z: bigint;
}

const hex = (text: string): bigint => BigInt(`0x${text}`);

// SEC 2 / FIPS 186-4 domain parameters (a = p − 3 on all three).
const CURVES: Readonly<Record<CurveName, Curve>> = {
  'P-256': {
    p: hex('ffffffff00000001000000000000000000000000ffffffffffffffffffffffff'),
    b: hex('5ac635d8aa3a93e7b3ebbd55769886bc651d06b0cc53b0f63bce3c3e27d2604b'),
    n: hex('ffffffff00000000ffffffffffffffffbce6faada7179e84f3b9cac2fc632551'),
    g: {
      x: hex('6b17d1f2e12c4247f8bce6e563a440f277037d812deb33a0f4a13945d898c296'),
      y: hex('4fe342e2fe1a7f9b8ee7eb4a7c0f9e162bce33576b315ececbb6406837bf51f5'),
    },
    size: 32,
    bits: 256,
  },
  'P-384': {
    p: hex('fffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffeffffffff0000000000000000ffffffff'),
    b: hex('b3312fa7e23ee7e4988e056be3f82d19181d9c6efe8141120314088f5013875ac656398d8a2ed19d2a85c8edd3ec2aef'),
    n: hex('ffffffffffffffffffffffffffffffffffffffffffffffffc7634d81f4372ddf581a0db248b0a77aecec196accc52973'),
    g: {
      x: hex('aa87ca22be8b05378eb1c71ef320ad746e1d3b628ba79b9859f741e082542a385502f25dbf55296c3a545e3872760ab7'),
      y: hex('3617de4a96262c6f5d9e98bf9292dc29f8f41dbd289a147ce9da3113b5f0b8c00a60b1ce1d7e819d7a431d7c90ea0e5f'),
    },
    size: 48,
    bits: 384,
  },
  'P-521': {
    p: (1n << 521n) - 1n,
    b: hex(
      '51953eb9618e1c9a1f929a21a0b68540eea2da725b99b315f3b8b489918ef109e156193951ec7e937b1652c0bd3bb1bf073573df883d2c34f1ef451fd46b503f00',
    ),
    n: hex(
      '1fffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffa51868783bf2f966b7fcc0148f709a5d03bb5c9b8899c47aebb6fb71e91386409',
    ),
    g: {
      x: hex(
        'c6858e06b70404e9cd9e3ecb662395b4429c648139053fb521f828af606b4d3dbaa14b5e77efe75928fe1dc127a2ffa8de3348b3c1856a429bf97e7e31c2e5bd66',
      ),
      y: hex(
        '11839296a789a3bc0045c8a5fb42c7d1bd998f54449579b446817afbd17273e662c97ee72995ef42640c550b9013fad0761353c7086a272c24088be94769fd16650',
      ),
    },
    size: 66,
    bits: 521,
  },
};

/** The curve of an EC key, or undefined for any other key or curve. */
export function curveOf(key: KeyObject): CurveName | undefined {
  if (key.asymmetricKeyType !== 'ec') return undefined;
  const named = key.asymmetricKeyDetails?.namedCurve;
  return named === 'prime256v1'
    ? 'P-256'
    : named === 'secp384r1'
      ? 'P-384'
      : named === 'secp521r1'
        ? 'P-521'
        : undefined;
}

/** Most bytes a DER Ecdsa-Sig-Value takes on the curve: two INTEGERs with a sign byte each, in a SEQUENCE. */
export function maxDerSignatureLength(curve: CurveName): number {
  const { size, bits } = CURVES[curve];
  const integer = 2 + size + (bits % 8 === 0 ? 1 : 0); // a sign byte only where the top bit can be set
  const content = 2 * integer;
  return content + (content < 128 ? 2 : 3);
}

/** The signature value in DER when `signature` is an ECDSA signature over `hash` by `publicKey`, else undefined. */
export function verifyEcdsaHash(publicKey: KeyObject, hash: Uint8Array, signature: Uint8Array): Uint8Array | undefined {
  const name = curveOf(publicKey);
  if (name === undefined) return undefined;
  const curve = CURVES[name];
  const rs = readSignature(signature, curve);
  if (!rs) return undefined;
  const { r, s } = rs;
  const jwk = publicKey.export({ format: 'jwk' });
  const q = { x: fromBase64Url(jwk.x ?? ''), y: fromBase64Url(jwk.y ?? '') };
  if (!onCurve(q, curve)) return undefined;
  const w = modInverse(s, curve.n);
  const e = hashInteger(hash, curve);
  const point = toAffine(multiplyTwo(curve.g, (e * w) % curve.n, q, (r * w) % curve.n, curve), curve);
  if (!point || point.x % curve.n !== r) return undefined;
  return encodeDer(r, s);
}

/** An ECDSA signature over `hash` with an EC private key, DER or P1363. For the sandbox and tests. */
export function signEcdsaHash(
  privateKey: KeyObject,
  hash: Uint8Array,
  encoding: 'der' | 'ieee-p1363' = 'der',
): Uint8Array {
  const name = curveOf(privateKey);
  if (name === undefined) throw new RangeError('signEcdsaHash needs a P-256, P-384 or P-521 private key');
  const curve = CURVES[name];
  const d = fromBase64Url(privateKey.export({ format: 'jwk' }).d ?? '');
  const e = hashInteger(hash, curve);
  for (;;) {
    const k = (bytesToBigInt(randomBytes(curve.size + 16)) % (curve.n - 1n)) + 1n;
    const point = toAffine(multiply(curve.g, k, curve), curve);
    const r = (point?.x ?? 0n) % curve.n;
    const s = (modInverse(k, curve.n) * ((e + r * d) % curve.n)) % curve.n;
    if (r === 0n || s === 0n) continue;
    return encoding === 'der'
      ? encodeDer(r, s)
      : Uint8Array.from([...bigIntToBytes(r, curve.size), ...bigIntToBytes(s, curve.size)]);
  }
}

/** Raw r||s (P1363) of the curve's size to DER; undefined when the length does not fit the curve. */
export function p1363ToDer(signature: Uint8Array, curve: CurveName): Uint8Array | undefined {
  const size = CURVES[curve].size;
  if (signature.length !== 2 * size) return undefined;
  return encodeDer(bytesToBigInt(signature.subarray(0, size)), bytesToBigInt(signature.subarray(size)));
}

/** DER (or already P1363) to raw r||s of the curve's size, as XML signatures carry ECDSA (RFC 4050); undefined when it is neither. */
export function derToP1363(signature: Uint8Array, curve: CurveName): Uint8Array | undefined {
  const size = CURVES[curve].size;
  const rs = readSignature(signature, CURVES[curve]);
  return rs ? Uint8Array.from([...bigIntToBytes(rs.r, size), ...bigIntToBytes(rs.s, size)]) : undefined;
}

/** r and s from a DER Ecdsa-Sig-Value in canonical form, else from P1363 of the curve's size; both in [1, n−1]. */
function readSignature(signature: Uint8Array, curve: Curve): { r: bigint; s: bigint } | undefined {
  let rs = readDer(signature);
  if (!rs && signature.length === 2 * curve.size)
    rs = { r: bytesToBigInt(signature.subarray(0, curve.size)), s: bytesToBigInt(signature.subarray(curve.size)) };
  if (!rs || rs.r <= 0n || rs.s <= 0n || rs.r >= curve.n || rs.s >= curve.n) return undefined;
  return rs;
}

function readDer(signature: Uint8Array): { r: bigint; s: bigint } | undefined {
  if (signature[0] !== 0x30) return undefined;
  try {
    const items = sequenceItems(decode(signature, 'Ecdsa-Sig-Value'), 'Ecdsa-Sig-Value');
    if (items.length !== 2) return undefined;
    const [r, s] = items.map((item) => integerBytes(item, 'Ecdsa-Sig-Value')).map(bytesToBigInt) as [bigint, bigint];
    // Only the one DER encoding of (r, s): BER variants and negative numbers are refused.
    return equalBytes(encodeDer(r, s), signature) ? { r, s } : undefined;
  } catch (error) {
    if (error instanceof Asn1StructureError) return undefined;
    throw error;
  }
}

function encodeDer(r: bigint, s: bigint): Uint8Array {
  return sequence(unsignedInteger(bigIntToBytes(r)), unsignedInteger(bigIntToBytes(s)));
}

/** The leftmost bits of the hash, as many as the order has (FIPS 186-4 §6.4). */
function hashInteger(hash: Uint8Array, curve: Curve): bigint {
  const value = bytesToBigInt(hash);
  const excess = hash.length * 8 - curve.bits;
  return excess > 0 ? value >> BigInt(excess) : value;
}

function onCurve(point: Affine, curve: Curve): boolean {
  const { p } = curve;
  if (point.x < 0n || point.x >= p || point.y < 0n || point.y >= p) return false;
  return mod(point.y * point.y - (point.x * point.x * point.x - 3n * point.x + curve.b), p) === 0n;
}

const INFINITY: Jacobian = { x: 0n, y: 1n, z: 0n };
const WINDOW_BITS = 4n;

function multiply(point: Affine, scalar: bigint, curve: Curve): Jacobian {
  return multiplyTwo(point, scalar, point, 0n, curve);
}

/** a·P + b·Q in one pass of doublings, four bits at a time (Shamir's trick with fixed windows). */
function multiplyTwo(p: Affine, a: bigint, q: Affine, b: bigint, curve: Curve): Jacobian {
  const tables = [table(p, curve), table(q, curve)];
  const bits = BigInt(Math.max(a.toString(2).length, b.toString(2).length));
  let result = INFINITY;
  for (
    let shift = ((bits + WINDOW_BITS - 1n) / WINDOW_BITS) * WINDOW_BITS - WINDOW_BITS;
    shift >= 0n;
    shift -= WINDOW_BITS
  ) {
    for (let i = 0n; i < WINDOW_BITS; i++) result = double(result, curve);
    result = add(result, tables[0]![Number((a >> shift) & 15n)]!, curve);
    result = add(result, tables[1]![Number((b >> shift) & 15n)]!, curve);
  }
  return result;
}

/** 0·P … 15·P. */
function table(point: Affine, curve: Curve): Jacobian[] {
  const base: Jacobian = { x: point.x, y: point.y, z: 1n };
  const multiples = [INFINITY, base];
  for (let i = 2; i < 16; i++) multiples.push(add(multiples[i - 1]!, base, curve));
  return multiples;
}

// dbl-2001-b (a = −3) and add-2007-bl, from the Explicit-Formulas Database.
function double(point: Jacobian, curve: Curve): Jacobian {
  const { p } = curve;
  if (point.z === 0n || point.y === 0n) return INFINITY;
  const delta = (point.z * point.z) % p;
  const gamma = (point.y * point.y) % p;
  const beta = (point.x * gamma) % p;
  const alpha = (3n * mod(point.x - delta, p) * ((point.x + delta) % p)) % p;
  const x = mod(alpha * alpha - 8n * beta, p);
  const z = mod((point.y + point.z) ** 2n - gamma - delta, p);
  const y = mod(alpha * mod(4n * beta - x, p) - 8n * gamma * gamma, p);
  return { x, y, z };
}

function add(a: Jacobian, b: Jacobian, curve: Curve): Jacobian {
  const { p } = curve;
  if (a.z === 0n) return b;
  if (b.z === 0n) return a;
  const z1z1 = (a.z * a.z) % p;
  const z2z2 = (b.z * b.z) % p;
  const u1 = (a.x * z2z2) % p;
  const u2 = (b.x * z1z1) % p;
  const s1 = (((a.y * b.z) % p) * z2z2) % p;
  const s2 = (((b.y * a.z) % p) * z1z1) % p;
  const h = mod(u2 - u1, p);
  const r = mod(s2 - s1, p);
  if (h === 0n) return r === 0n ? double(a, curve) : INFINITY;
  const hh = (h * h) % p;
  const hhh = (h * hh) % p;
  const v = (u1 * hh) % p;
  const x = mod(r * r - hhh - 2n * v, p);
  const y = mod(r * mod(v - x, p) - s1 * hhh, p);
  const z = (((a.z * b.z) % p) * h) % p;
  return { x, y, z };
}

function toAffine(point: Jacobian, curve: Curve): Affine | undefined {
  if (point.z === 0n) return undefined;
  const inverse = modInverse(point.z, curve.p);
  const inverse2 = (inverse * inverse) % curve.p;
  return { x: (point.x * inverse2) % curve.p, y: (((point.y * inverse2) % curve.p) * inverse) % curve.p };
}

function mod(value: bigint, modulus: bigint): bigint {
  const rest = value % modulus;
  return rest < 0n ? rest + modulus : rest;
}

/** Inverse modulo a prime, by Fermat. */
function modInverse(value: bigint, prime: bigint): bigint {
  let result = 1n;
  let base = mod(value, prime);
  for (let exponent = prime - 2n; exponent > 0n; exponent >>= 1n) {
    if (exponent & 1n) result = (result * base) % prime;
    base = (base * base) % prime;
  }
  return result;
}

function bytesToBigInt(bytes: Uint8Array): bigint {
  return bytes.length === 0 ? 0n : BigInt(`0x${Buffer.from(bytes).toString('hex')}`);
}

function bigIntToBytes(value: bigint, size?: number): Uint8Array {
  let text = value.toString(16);
  if (text.length % 2) text = `0${text}`;
  if (size !== undefined) text = text.padStart(size * 2, '0');
  return new Uint8Array(Buffer.from(text, 'hex'));
}

function fromBase64Url(text: string): bigint {
  return bytesToBigInt(Buffer.from(text, 'base64url'));
}

function equalBytes(a: Uint8Array, b: Uint8Array): boolean {
  return a.length === b.length && Buffer.from(a).equals(b);
}
