/**
 * One error hierarchy for the whole product. Every failure a user can meet is an EsignError with a
 * stable `code` (scripts match on it, `--json` prints it), a one-line `message` (what failed and
 * why), a `hint` (what to do), and the process exit code. Only `src/cli/main.ts` renders them.
 *
 * Codes are grouped by family; add a code to its family's block and give it an exit code in
 * EXIT_CODE_BY_FAMILY (through its prefix) — never reuse a code for a different meaning.
 */

/** The documented exit codes (README "Exit codes"). */
export const ExitCode = {
  ok: 0,
  internal: 1,
  usage: 2,
  config: 3,
  auth: 4,
  unavailable: 5,
  protocol: 6,
  input: 7,
  output: 8,
  verification: 9,
  partial: 10,
  credential: 11,
  /** `esign verify`: intact and validly signed, but with an algorithm no longer acceptable (VERIFY_WEAK_ALGORITHM). */
  weakAlgorithm: 12,
  /** `esign sign --require`: the credential cannot give the qualification asked for, or no trusted list can tell. */
  notQualified: 13,
  interrupted: 130,
  /** stdout or stderr closed by its reader (128 + SIGPIPE, as a shell reports a tool ended by it). */
  brokenPipe: 141,
  terminated: 143,
} as const;
export type ExitCode = (typeof ExitCode)[keyof typeof ExitCode];

export type EsignErrorCode =
  // usage and configuration
  | 'USAGE'
  | 'CONFIG_INVALID'
  | 'CONFIG_UNKNOWN_PROFILE'
  | 'CONFIG_UNKNOWN_KEY'
  | 'CONFIG_MISSING'
  | 'CONFIG_SECRET_FILE_MODE'
  | 'CONFIG_INSECURE_URL'
  | 'PROMPT_NEEDS_TTY'
  // browser authorization (loopback receiver, OAuth redirects)
  | 'AUTH_TIMEOUT'
  | 'AUTH_STATE_MISMATCH'
  | 'AUTH_DENIED'
  | 'AUTH_SERVER_ERROR'
  | 'AUTH_INVALID_REQUEST'
  | 'AUTH_REDIRECT_INVALID'
  | 'AUTH_PORT_IN_USE'
  | 'AUTH_BROWSER_FAILED'
  | 'AUTH_LOGIN_REQUIRED'
  | 'AUTH_TOKEN_REJECTED'
  // explicit credential authorization (PIN, OTP)
  | 'AUTH_PIN_INVALID'
  | 'AUTH_OTP_INVALID'
  | 'AUTH_CREDENTIAL_LOCKED'
  | 'AUTH_FACTOR_MISSING'
  // HTTP transport
  | 'HTTP_UNREACHABLE'
  | 'HTTP_TIMEOUT'
  | 'HTTP_RATE_LIMITED'
  | 'HTTP_SERVER_ERROR'
  | 'HTTP_CLIENT_ERROR'
  | 'HTTP_BAD_RESPONSE'
  | 'HTTP_TLS_FAILED'
  | 'HTTP_PROXY_REFUSED'
  // remote signing service (CSC)
  | 'CSC_UNAUTHORIZED'
  | 'CSC_INVALID_REQUEST'
  | 'CSC_SAD_INVALID'
  | 'CSC_SAD_EXPIRED'
  | 'CSC_BAD_RESPONSE'
  | 'CSC_SIGNATURE_INVALID'
  | 'CSC_TOO_MANY_HASHES'
  | 'CSC_UNSUPPORTED_SERVICE'
  | 'CSC_METHOD_REFUSED'
  | 'CREDENTIAL_NOT_FOUND'
  | 'CREDENTIAL_DISABLED'
  | 'CREDENTIAL_AMBIGUOUS'
  | 'CREDENTIAL_UNSUPPORTED_KEY'
  | 'CREDENTIAL_CHAIN_INCOMPLETE'
  // timestamping
  | 'TSA_UNAUTHORIZED'
  | 'TSA_HTTP_ERROR'
  | 'TSA_REJECTED'
  | 'TSA_BAD_RESPONSE'
  | 'TSA_IMPRINT_MISMATCH'
  | 'TSA_NONCE_MISMATCH'
  | 'TSA_POLICY_MISMATCH'
  | 'TSA_SIGNATURE_INVALID'
  | 'TSA_CERT_UNTRUSTED'
  | 'TSA_NOT_CONFIGURED'
  // revocation data for long-term validation (OCSP, CRL, issuer certificates)
  | 'REVOCATION_UNAVAILABLE'
  | 'REVOCATION_BAD_RESPONSE'
  | 'REVOCATION_CERT_REVOKED'
  | 'REVOCATION_CHAIN_INCOMPLETE'
  // identity (OIDC)
  | 'OIDC_ID_TOKEN_INVALID'
  | 'OIDC_NONCE_MISMATCH'
  | 'OIDC_BAD_RESPONSE'
  | 'OIDC_SUB_MISMATCH'
  | 'OIDC_DISCOVERY_FAILED'
  | 'OIDC_ISSUER_MISMATCH'
  | 'OIDC_AUDIENCE_MISMATCH'
  | 'OIDC_ID_TOKEN_EXPIRED'
  | 'OIDC_SIGNATURE_INVALID'
  | 'OIDC_ALG_UNSUPPORTED'
  // storage
  | 'STORAGE_UNAUTHORIZED'
  | 'STORAGE_BAD_REQUEST'
  | 'STORAGE_UNAVAILABLE'
  | 'STORAGE_BAD_RESPONSE'
  | 'STORAGE_OBJECT_EXISTS'
  | 'STORAGE_ACCESS_DENIED'
  | 'STORAGE_NOT_FOUND'
  // input documents
  | 'INPUT_NOT_FOUND'
  | 'INPUT_UNREADABLE'
  | 'PDF_NOT_PDF'
  | 'PDF_XREF_BROKEN'
  | 'PDF_ENCRYPTED'
  | 'PDF_ENCRYPTION_INVALID'
  | 'PDF_PASSWORD_REQUIRED'
  | 'PDF_PASSWORD_WRONG'
  | 'PDF_PERMISSION_DENIED'
  | 'PDF_CERTIFIED_NO_CHANGES'
  | 'PDF_UNSUPPORTED'
  | 'PDF_FIELD_NOT_FOUND'
  | 'PDF_FIELD_ALREADY_SIGNED'
  | 'PDF_ALREADY_SIGNED'
  | 'PDF_PLACEHOLDER_TOO_SMALL'
  | 'PDF_NOT_SIGNED'
  | 'CMS_BAD_STRUCTURE'
  | 'CONTAINER_INVALID'
  // XML read from outside (XAdES): the shared XML rules, and the signature structures esign refuses
  | 'XML_TOO_LARGE'
  | 'XML_UNSAFE'
  | 'XML_MALFORMED'
  | 'XADES_REFUSED'
  | 'STATE_FILE_INVALID'
  // outputs
  | 'OUTPUT_EXISTS'
  | 'OUTPUT_WRITE_FAILED'
  // verification results
  | 'VERIFY_FAILED'
  | 'VERIFY_UNTRUSTED'
  | 'VERIFY_REVOCATION_UNKNOWN'
  | 'VERIFY_NO_SIGNATURES'
  | 'VERIFY_WEAK_ALGORITHM'
  // qualification required of a signature (sign --require)
  | 'QUALIFICATION_NOT_MET'
  | 'QUALIFICATION_UNKNOWN'
  // EU trusted lists (esign trust)
  | 'TRUST_LIST_TOO_LARGE'
  | 'TRUST_LIST_UNSAFE_XML'
  | 'TRUST_LIST_MALFORMED'
  | 'TRUST_LIST_STRUCTURE_INVALID'
  | 'TRUST_LIST_SIGNATURE_INVALID'
  | 'TRUST_LIST_SIGNER_UNTRUSTED'
  | 'TRUST_LIST_WRONG_TERRITORY'
  | 'TRUST_LIST_TEST_REFUSED'
  | 'TRUST_LIST_NOT_CACHED'
  // batches and process
  | 'BATCH_PARTIAL'
  | 'INTERRUPTED'
  | 'INTERNAL';

const EXIT_CODE_BY_CODE: Partial<Record<EsignErrorCode, ExitCode>> = {
  USAGE: ExitCode.usage,
  PROMPT_NEEDS_TTY: ExitCode.usage,
  STATE_FILE_INVALID: ExitCode.input,
  CMS_BAD_STRUCTURE: ExitCode.input,
  CONTAINER_INVALID: ExitCode.input,
  INPUT_NOT_FOUND: ExitCode.input,
  INPUT_UNREADABLE: ExitCode.input,
  OUTPUT_EXISTS: ExitCode.output,
  OUTPUT_WRITE_FAILED: ExitCode.output,
  BATCH_PARTIAL: ExitCode.partial,
  INTERRUPTED: ExitCode.interrupted,
  INTERNAL: ExitCode.internal,
  HTTP_UNREACHABLE: ExitCode.unavailable,
  HTTP_TIMEOUT: ExitCode.unavailable,
  HTTP_RATE_LIMITED: ExitCode.unavailable,
  HTTP_SERVER_ERROR: ExitCode.unavailable,
  HTTP_TLS_FAILED: ExitCode.unavailable,
  HTTP_PROXY_REFUSED: ExitCode.unavailable,
  STORAGE_UNAVAILABLE: ExitCode.unavailable,
  REVOCATION_UNAVAILABLE: ExitCode.unavailable,
  REVOCATION_CERT_REVOKED: ExitCode.verification,
  VERIFY_WEAK_ALGORITHM: ExitCode.weakAlgorithm,
  HTTP_CLIENT_ERROR: ExitCode.protocol,
  HTTP_BAD_RESPONSE: ExitCode.protocol,
  TSA_NOT_CONFIGURED: ExitCode.config,
  AUTH_LOGIN_REQUIRED: ExitCode.auth,
  TRUST_LIST_TOO_LARGE: ExitCode.input,
  TRUST_LIST_UNSAFE_XML: ExitCode.input,
  TRUST_LIST_MALFORMED: ExitCode.input,
  TRUST_LIST_NOT_CACHED: ExitCode.config,
};

const EXIT_CODE_BY_PREFIX: ReadonlyArray<[string, ExitCode]> = [
  ['CONFIG_', ExitCode.config],
  ['AUTH_', ExitCode.auth],
  ['CREDENTIAL_', ExitCode.credential],
  ['CSC_', ExitCode.protocol],
  ['TSA_', ExitCode.protocol],
  ['OIDC_', ExitCode.auth],
  ['STORAGE_', ExitCode.protocol],
  ['REVOCATION_', ExitCode.protocol],
  ['PDF_', ExitCode.input],
  ['XML_', ExitCode.input],
  ['XADES_', ExitCode.input],
  ['VERIFY_', ExitCode.verification],
  ['QUALIFICATION_', ExitCode.notQualified],
  ['TRUST_LIST_', ExitCode.verification],
];

export function exitCodeFor(code: EsignErrorCode): ExitCode {
  const direct = EXIT_CODE_BY_CODE[code];
  if (direct !== undefined) return direct;
  for (const [prefix, exit] of EXIT_CODE_BY_PREFIX) if (code.startsWith(prefix)) return exit;
  return ExitCode.internal;
}

export interface EsignErrorOptions {
  /** What the user can do about it: one short sentence. */
  hint?: string;
  cause?: unknown;
  /** Overrides the exit code derived from the code's family. */
  exitCode?: ExitCode;
  /** Extra machine-readable facts for `--json` (never secrets). */
  details?: Record<string, unknown>;
}

export class EsignError extends Error {
  readonly code: EsignErrorCode;
  readonly hint: string | undefined;
  readonly exitCode: ExitCode;
  readonly details: Record<string, unknown> | undefined;

  constructor(code: EsignErrorCode, message: string, options: EsignErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'EsignError';
    this.code = code;
    this.hint = options.hint;
    this.exitCode = options.exitCode ?? exitCodeFor(code);
    this.details = options.details;
  }
}

export function isEsignError(value: unknown, code?: EsignErrorCode): value is EsignError {
  return value instanceof EsignError && (code === undefined || value.code === code);
}

/** Wraps an unknown failure at a port boundary, keeping an EsignError as it is. */
export function asEsignError(
  error: unknown,
  code: EsignErrorCode,
  message: string,
  options: Omit<EsignErrorOptions, 'cause'> = {},
): EsignError {
  if (error instanceof EsignError) return error;
  return new EsignError(code, message, { ...options, cause: error });
}

/** Ends a message with a full stop (unless it ends in one already), so the hint after it reads as a new sentence. */
export function sentence(text: string): string {
  return /[.!?]$/.test(text.trimEnd()) ? text.trimEnd() : `${text.trimEnd()}.`;
}

/** The same error, with the file it is about at the front of the message (batches name their failures). */
export function naming(input: string, error: unknown): unknown {
  if (!(error instanceof EsignError) || error.message.includes(input)) return error;
  return new EsignError(error.code, `${input}: ${error.message}`, {
    hint: error.hint,
    cause: error,
    exitCode: error.exitCode,
    details: error.details,
  });
}
