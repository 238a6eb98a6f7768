/**
 * Distinguished names compared as RFC 5280 §7.1 (with RFC 4518) compares them, not byte for byte: a
 * CA's subject in a trusted list and the issuer field of the certificates it signed may be encoded
 * differently (PrintableString in one, UTF8String in the other; other case; extra spaces). The key
 * only finds candidates; the issuer's signature confirms one (the chain builder checks it).
 */
import { createHash, type X509Certificate } from 'node:crypto';

/**
 * The comparable form of a name as Node prints it (one `TYPE=value` line per RDN, `+` between the
 * attributes of a multi-valued one, values converted to UTF-8 whatever their string type): each value
 * NFKC-normalized, case-folded, trimmed, its inner white space collapsed; a multi-valued RDN's
 * attributes sorted.
 */
export function normalizedName(printed: string): string {
  return printed
    .split('\n')
    .filter(Boolean)
    .map((rdn) => splitUnescaped(rdn, '+').map(normalizedAttribute).sort().join('+'))
    .join('\n');
}

/** A short key of the normalized name (what the trusted-list index stores): it finds candidates, compared after. */
export function nameKey(printed: string): string {
  return createHash('sha256').update(normalizedName(printed)).digest('hex').slice(0, 16);
}

export function subjectKey(certificate: X509Certificate): string {
  return keyOf(certificate, 'subject');
}

export function issuerKey(certificate: X509Certificate): string {
  return keyOf(certificate, 'issuer');
}

/** Whether two certificates' subjects are the same name (RFC 5280 §7.1). */
export function sameSubject(a: X509Certificate, b: X509Certificate): boolean {
  return a.subject === b.subject || subjectKey(a) === subjectKey(b);
}

const keys = new WeakMap<X509Certificate, { subject?: string; issuer?: string }>();

function keyOf(certificate: X509Certificate, field: 'subject' | 'issuer'): string {
  let known = keys.get(certificate);
  if (!known) keys.set(certificate, (known = {}));
  return (known[field] ??= nameKey(certificate[field]));
}

function normalizedAttribute(attribute: string): string {
  const equals = attribute.indexOf('=');
  if (equals === -1) return attribute;
  const type = attribute.slice(0, equals).trim().toUpperCase();
  // RFC 4514 escapes (`\,`, `\ ` for a leading or trailing space) undone; `\XX` hex escapes kept.
  const value = attribute
    .slice(equals + 1)
    .replace(/\\([ ,+"\\<>;#=])/g, '$1')
    .normalize('NFKC')
    .toLowerCase()
    .replace(/\s+/g, ' ')
    .trim();
  return `${type}=${value}`;
}

/** Splits at `separator` where it is not escaped with a backslash. */
function splitUnescaped(text: string, separator: string): string[] {
  const parts: string[] = [];
  let current = '';
  for (let i = 0; i < text.length; i++) {
    const char = text[i] as string;
    if (char === '\\' && i + 1 < text.length) {
      current += char + (text[i + 1] as string);
      i++;
    } else if (char === separator) {
      parts.push(current);
      current = '';
    } else current += char;
  }
  parts.push(current);
  return parts;
}
