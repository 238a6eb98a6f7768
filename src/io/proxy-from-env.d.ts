/** The one function esign uses from proxy-from-env, which ships no types. */
declare module 'proxy-from-env' {
  /** The proxy for a URL from HTTPS_PROXY / HTTP_PROXY / ALL_PROXY and NO_PROXY (either case), or '' for none. */
  export function getProxyForUrl(url: string | URL): string;
}
