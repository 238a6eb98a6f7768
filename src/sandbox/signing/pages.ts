/** The signing service's browser pages (sign in, approve, errors), in English and Dutch. */
import { escapeHtml, hiddenInputs, renderPage, type PageLang } from '../pages.js';
import type { AuthorizationRequest } from './service.js';

const TEXT = {
  en: {
    errorTitle: 'Authorization request rejected',
    errorLead: 'This request cannot be handled, and it is not safe to send you back to the application:',
    signInTitle: 'Sign in to the signing service',
    signInLead: 'Choose a test user. The sandbox has no passwords: every user here is fictitious.',
    user: 'Test user',
    continue: 'Continue',
    cancel: 'Cancel',
    serviceTitle: 'Allow access to your signing credentials',
    serviceLead: (client: string) =>
      `<strong>${client}</strong> asks to list your signing credentials and read their certificates, for one hour.`,
    credentialTitle: (n: number) => `Authorize ${n} signature${n === 1 ? '' : 's'}`,
    credentialLead: (n: number, credential: string) =>
      `Authorize ${n} signature${n === 1 ? '' : 's'} with credential <code>${credential}</code>. Only these SHA-256 hashes will be signed, within 5 minutes:`,
    signedInAs: (user: string) => `Signed in as <strong>${user}</strong>.`,
    approve: 'Approve',
    refuse: 'Refuse',
    expiredTitle: 'This approval page has expired',
    expiredLead: 'Start again from the application.',
  },
  nl: {
    errorTitle: 'Autorisatieverzoek afgewezen',
    errorLead: 'Dit verzoek kan niet worden verwerkt, en het is niet veilig u terug te sturen naar de toepassing:',
    signInTitle: 'Inloggen bij de ondertekendienst',
    signInLead: 'Kies een testgebruiker. De testomgeving kent geen wachtwoorden: alle gebruikers hier zijn fictief.',
    user: 'Testgebruiker',
    continue: 'Doorgaan',
    cancel: 'Annuleren',
    serviceTitle: 'Toegang geven tot uw ondertekensleutels',
    serviceLead: (client: string) =>
      `<strong>${client}</strong> vraagt om een uur lang uw ondertekensleutels op te vragen en hun certificaten te lezen.`,
    credentialTitle: (n: number) => `${n} handtekening${n === 1 ? '' : 'en'} goedkeuren`,
    credentialLead: (n: number, credential: string) =>
      `Keur ${n} handtekening${n === 1 ? '' : 'en'} goed met sleutel <code>${credential}</code>. Alleen deze SHA-256-hashes worden ondertekend, binnen 5 minuten:`,
    signedInAs: (user: string) => `Ingelogd als <strong>${user}</strong>.`,
    approve: 'Goedkeuren',
    refuse: 'Weigeren',
    expiredTitle: 'Deze goedkeuringspagina is verlopen',
    expiredLead: 'Begin opnieuw vanuit de toepassing.',
  },
} as const;

export function errorPage(lang: PageLang, message: string): string {
  const text = TEXT[lang];
  return renderPage({
    title: text.errorTitle,
    lang,
    body: `<h1>${text.errorTitle}</h1><p>${text.errorLead}</p><p><strong>${escapeHtml(message)}</strong></p>`,
  });
}

export function expiredPage(lang: PageLang): string {
  const text = TEXT[lang];
  return renderPage({
    title: text.expiredTitle,
    lang,
    body: `<h1>${text.expiredTitle}</h1><p>${text.expiredLead}</p>`,
  });
}

/** Step 1: choose a test user. Carries the authorization request through as hidden fields. */
export function signInPage(lang: PageLang, action: string, params: URLSearchParams, users: readonly string[]): string {
  const text = TEXT[lang];
  const options = users.map((user) => `<option value="${escapeHtml(user)}">${escapeHtml(user)}</option>`).join('');
  return renderPage({
    title: text.signInTitle,
    lang,
    body: `<h1>${text.signInTitle}</h1><p class="muted">${text.signInLead}</p>
<form method="post" action="${escapeHtml(action)}">${hiddenInputs(params)}
<label for="user">${text.user}</label><select id="user" name="user">${options}</select>
<p><button type="submit" name="action" value="login">${text.continue}</button><button type="submit" class="secondary" name="action" value="cancel">${text.cancel}</button></p>
</form>`,
  });
}

/** Step 2: approve or refuse; for scope credential it names the credential and lists every hash. */
export function consentPage(
  lang: PageLang,
  action: string,
  ticket: string,
  request: AuthorizationRequest,
  user: string,
): string {
  const text = TEXT[lang];
  const count = request.hashes?.length ?? 0;
  const title = request.scope === 'credential' ? text.credentialTitle(count) : text.serviceTitle;
  const lead =
    request.scope === 'credential'
      ? `<p>${text.credentialLead(count, escapeHtml(request.credentialID ?? ''))}</p><ul class="hashes">${(
          request.hashes ?? []
        )
          .map((hash) => `<li class="mono">${Buffer.from(hash).toString('hex')}</li>`)
          .join('')}</ul>`
      : `<p>${text.serviceLead(escapeHtml(request.clientId))}</p>`;
  return renderPage({
    title,
    lang,
    body: `<h1>${title}</h1><p class="muted">${text.signedInAs(escapeHtml(user))}</p>${lead}
<form method="post" action="${escapeHtml(action)}">${hiddenInputs({ ticket })}
<p><button type="submit" name="decision" value="approve">${text.approve}</button><button type="submit" class="secondary" name="decision" value="refuse">${text.refuse}</button></p>
</form>`,
  });
}

/** The sandbox's stand-in for an SMS inbox: the online OTPs it "sent", newest first (English only: a test aid). */
export function otpOutboxPage(sent: ReadonlyArray<{ credentialID: string; code: string; sentAt: number }>): string {
  const rows = [...sent]
    .reverse()
    .map(
      (entry) =>
        `<tr><td><code>${escapeHtml(entry.credentialID)}</code></td><td><strong class="otp">${escapeHtml(entry.code)}</strong></td><td>${new Date(entry.sentAt).toISOString()}</td></tr>`,
    )
    .join('');
  const body = `<h1>One-time passwords sent</h1><p>What the sandbox signing service would have sent by SMS (credentials/sendOTP). Each code is valid for 5 minutes, once.</p>${
    rows
      ? `<table><thead><tr><th>Credential</th><th>Code</th><th>Sent</th></tr></thead><tbody>${rows}</tbody></table>`
      : '<p>None sent yet.</p>'
  }`;
  return renderPage({ title: 'One-time passwords sent', lang: 'en', body });
}
