/** Comparing a presented secret (client secret, password, PIN, OTP) in constant time, whatever its length. */
import { createHash, timingSafeEqual } from 'node:crypto';

export function timingSafeEqualText(a: string, b: string): boolean {
  return timingSafeEqual(createHash('sha256').update(a).digest(), createHash('sha256').update(b).digest());
}
