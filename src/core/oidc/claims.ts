/**
 * Identity claims: which scope releases which claims (docs/DESIGN §4, "scopes → claims"), their
 * labels, and the checks on the `com.vendor.proof` array. Pure.
 */

export const SCOPE_OPENID = 'openid';
export const SCOPE_EMAIL = 'email';
export const SCOPE_PERSONAL_INFO = 'com.vendor.personal_info';
export const SCOPE_ID_NUMBER = 'com.vendor.id_number';
export const SCOPE_PROOF = 'com.vendor.proof';
/** Not in the identity document: an access token with it is accepted by the storage service. */
export const SCOPE_STORAGE = 'com.vendor.storage';

export const KNOWN_SCOPES = [
  SCOPE_OPENID,
  SCOPE_EMAIL,
  SCOPE_PROOF,
  SCOPE_PERSONAL_INFO,
  SCOPE_ID_NUMBER,
  SCOPE_STORAGE,
] as const;

/** Claims about the token itself, present with `openid` alone. */
export const TOKEN_CLAIMS = ['sub', 'iss', 'aud', 'auth_time', 'iat', 'rat'] as const;

/** The identity claims each scope releases (in display order). */
export const CLAIMS_BY_SCOPE: Readonly<Record<string, readonly string[]>> = {
  [SCOPE_OPENID]: [],
  [SCOPE_EMAIL]: ['email', 'email_verified'],
  [SCOPE_PERSONAL_INFO]: [
    'given_name',
    'com.vendor.last_name',
    'birthdate',
    'com.vendor.birthplace',
    'com.vendor.nationality',
    'com.vendor.nl_brp_voornaam',
    'com.vendor.nl_brp_voorvoegsel',
    'com.vendor.nl_brp_geslachtsnaam',
    'com.vendor.nl_brp_geslachtsnaam_zonder_voorvoegsel',
  ],
  [SCOPE_ID_NUMBER]: [
    'com.vendor.id_number',
    'com.vendor.document.type',
    'com.vendor.id_document_issuance_date',
    'com.vendor.id_document_issuance_place',
    'com.vendor.id_document_expiration_date',
  ],
  [SCOPE_PROOF]: ['com.vendor.proof'],
  [SCOPE_STORAGE]: [],
};

export const CLAIM_LABELS: Readonly<Record<string, string>> = {
  sub: 'Subject (pairwise)',
  iss: 'Issuer',
  aud: 'Audience',
  auth_time: 'Authenticated at',
  iat: 'Issued at',
  rat: 'Requested at',
  email: 'E-mail',
  email_verified: 'E-mail verified',
  given_name: 'Given name(s)',
  'com.vendor.last_name': 'Last name',
  birthdate: 'Birth date',
  'com.vendor.birthplace': 'Birthplace',
  'com.vendor.nationality': 'Nationality',
  'com.vendor.nl_brp_voornaam': 'Given name (BRP)',
  'com.vendor.nl_brp_voorvoegsel': 'Prefix (BRP)',
  'com.vendor.nl_brp_geslachtsnaam': 'Last name (BRP)',
  'com.vendor.nl_brp_geslachtsnaam_zonder_voorvoegsel': 'Last name without prefix (BRP)',
  'com.vendor.id_number': 'ID document number',
  'com.vendor.document.type': 'ID document type',
  'com.vendor.id_document_issuance_date': 'ID document issued on',
  'com.vendor.id_document_issuance_place': 'ID document issued at',
  'com.vendor.id_document_expiration_date': 'ID document expires on',
  'com.vendor.proof': 'Proof documents',
};

/** Scopes as sent: `openid` first, each once, in the given order. */
export function normalizeScopes(scopes: Iterable<string>): string[] {
  const out = [SCOPE_OPENID];
  for (const entry of scopes) {
    for (const scope of entry.split(/[\s,]+/)) if (scope && !out.includes(scope)) out.push(scope);
  }
  return out;
}

/** Parses a space-delimited `scope` value. */
export function parseScope(value: string): string[] {
  return value.split(' ').filter(Boolean);
}

/** The identity claims the given scopes ask for (token claims excluded). */
export function requestedClaims(scopes: readonly string[]): string[] {
  const claims: string[] = [];
  for (const scope of scopes)
    for (const claim of CLAIMS_BY_SCOPE[scope] ?? []) if (!claims.includes(claim)) claims.push(claim);
  return claims;
}

/** Claims that were asked for but are absent: the service could not share them (OIDC Core 5.3.2). */
export function notSharedClaims(scopes: readonly string[], claims: Record<string, unknown>): string[] {
  return requestedClaims(scopes).filter((claim) => claims[claim] === undefined || claims[claim] === null);
}

/** `aud` as a list: the identity document allows a string, its samples show an array. */
export function audienceList(aud: unknown): string[] | undefined {
  if (typeof aud === 'string') return [aud];
  if (Array.isArray(aud) && aud.length > 0 && aud.every((item) => typeof item === 'string')) return aud as string[];
  return undefined;
}

export interface ProofItem {
  id: string;
  content_type: string;
  base64_encoded_content: string;
}

/** The `com.vendor.proof` items, or a reason why the value is not a valid proof array. */
export function parseProof(value: unknown): { items: ProofItem[] } | { problem: string } {
  if (!Array.isArray(value)) return { problem: 'com.vendor.proof is not a JSON array' };
  const items: ProofItem[] = [];
  const ids = new Set<string>();
  for (const [index, item] of value.entries()) {
    const object =
      item !== null && typeof item === 'object' && !Array.isArray(item) ? (item as Record<string, unknown>) : undefined;
    const id = object?.['id'];
    const contentType = object?.['content_type'];
    const content = object?.['base64_encoded_content'];
    if (typeof id !== 'string' || id === '') return { problem: `proof item ${index} has no id` };
    if (typeof contentType !== 'string' || !/^[\w.+-]+\/[\w.+-]+/.test(contentType))
      return { problem: `proof item ${id} has no valid content_type` };
    if (typeof content !== 'string' || !/^[A-Za-z0-9+/\s]*={0,2}\s*$/.test(content))
      return { problem: `proof item ${id} is not base64-encoded` };
    if (ids.has(id)) return { problem: `proof item id ${id} appears twice` };
    ids.add(id);
    items.push({ id, content_type: contentType, base64_encoded_content: content });
  }
  return { items };
}

const EXTENSIONS: Readonly<Record<string, string>> = {
  'application/pdf': 'pdf',
  'application/json': 'json',
  'application/xml': 'xml',
  'text/xml': 'xml',
  'text/plain': 'txt',
  'image/png': 'png',
  'image/jpeg': 'jpg',
  'image/gif': 'gif',
  'image/webp': 'webp',
  'application/pkcs7-signature': 'p7s',
  'application/pkcs7-mime': 'p7m',
  'application/jose': 'jws',
  'application/jwt': 'jwt',
  'application/octet-stream': 'bin',
};

/** A file extension for a media type (`bin` when unknown); parameters such as `;charset=` ignored. */
export function extensionFor(contentType: string): string {
  const bare = contentType.split(';')[0]?.trim().toLowerCase() ?? '';
  return EXTENSIONS[bare] ?? 'bin';
}

/** A file name from a proof id: safe characters only, never a path, never hidden. */
export function proofFileName(id: string, contentType: string): string {
  const safe =
    id
      .replace(/[^A-Za-z0-9._-]/g, '_')
      .replace(/^\.+/, '_')
      .slice(0, 120) || 'proof';
  return `${safe}.${extensionFor(contentType)}`;
}
