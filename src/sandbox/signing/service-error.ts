/** An error the signing service answers with: on the redirect (authorize) or as HTTP status + JSON. */
export class SigningServiceError extends Error {
  constructor(
    readonly status: number,
    readonly error: string,
    readonly description: string,
  ) {
    super(description);
  }
}
