/**
 * The identity service's browser pages: the QR challenge (with a button that plays the phone),
 * the PIN consent step, and error pages. Dutch by default, English on request (seed §4.1).
 */
import { escapeHtml, hiddenInputs, renderPage, type PageLang } from '../pages.js';
import { TEST_USERS } from './users.js';

const SCOPE_TEXT: Record<PageLang, Record<string, string>> = {
  nl: {
    openid: 'Inloggen met een pseudoniem (geen persoonsgegevens)',
    email: 'Uw e-mailadres',
    'com.vendor.personal_info': 'Uw naam, geboortedatum, geboorteplaats en nationaliteit',
    'com.vendor.id_number': 'Het nummer, het type en de datums van uw identiteitsdocument',
    'com.vendor.proof': 'Bewijsstukken van uw identificatie',
    'com.vendor.storage': 'Toegang tot uw opslag voor ondertekende documenten',
  },
  en: {
    openid: 'Log in with a pseudonym (no personal data)',
    email: 'Your e-mail address',
    'com.vendor.personal_info': 'Your name, date and place of birth, and nationality',
    'com.vendor.id_number': 'The number, type and dates of your identity document',
    'com.vendor.proof': 'Proof documents of your identification',
    'com.vendor.storage': 'Access to your storage for signed documents',
  },
};

const TEXT = {
  nl: {
    qrTitle: 'Inloggen met de app',
    qrLead: (client: string) =>
      `<strong>${client}</strong> wil dat u inlogt. Scan deze QR-code met de app op uw telefoon.`,
    qrValid: (until: string) => `De QR-code is 10 minuten geldig (tot ${until} UTC).`,
    qrAlt: 'QR-code om te scannen met de app',
    simulateTitle: 'Testomgeving: telefoon nadoen',
    simulateLead: 'Er is geen echte app. Kies een testgebruiker en doe alsof de telefoon de QR-code scant.',
    user: 'Testgebruiker',
    scan: 'Scannen met telefoon (gesimuleerd)',
    cancel: 'Annuleren',
    pinTitle: 'Toestemming geven met uw pincode',
    pinLead: (client: string) => `<strong>${client}</strong> vraagt om de volgende gegevens:`,
    pinValid: (until: string) => `Voer binnen 10 minuten uw pincode in (tot ${until} UTC).`,
    pin: 'Pincode (5 cijfers)',
    pinHint: 'Testomgeving: elke pincode van 5 cijfers is goed, bijvoorbeeld 12345.',
    pinInvalid: 'De pincode moet uit precies 5 cijfers bestaan.',
    signedInAs: (user: string) => `Gescand als testgebruiker <strong>${user}</strong>.`,
    approve: 'Toestemming geven',
    refuse: 'Weigeren',
    errorTitle: 'Inlogverzoek afgewezen',
    errorLead: 'Dit verzoek kan niet worden verwerkt, en het is niet veilig u terug te sturen naar de toepassing:',
    goneTitle: 'Deze inlogpagina is verlopen',
    goneLead: 'Deze inlogpoging bestaat niet (meer). Begin opnieuw vanuit de toepassing.',
  },
  en: {
    qrTitle: 'Log in with the app',
    qrLead: (client: string) =>
      `<strong>${client}</strong> asks you to log in. Scan this QR code with the app on your phone.`,
    qrValid: (until: string) => `The QR code is valid for 10 minutes (until ${until} UTC).`,
    qrAlt: 'QR code to scan with the app',
    simulateTitle: 'Test sandbox: play the phone',
    simulateLead: 'There is no real app. Choose a test user and pretend the phone scans the QR code.',
    user: 'Test user',
    scan: 'Scan with phone (simulated)',
    cancel: 'Cancel',
    pinTitle: 'Give consent with your PIN',
    pinLead: (client: string) => `<strong>${client}</strong> asks for the following data:`,
    pinValid: (until: string) => `Enter your PIN within 10 minutes (until ${until} UTC).`,
    pin: 'PIN (5 digits)',
    pinHint: 'Test sandbox: any PIN of 5 digits works, for example 12345.',
    pinInvalid: 'The PIN must be exactly 5 digits.',
    signedInAs: (user: string) => `Scanned as test user <strong>${user}</strong>.`,
    approve: 'Give consent',
    refuse: 'Refuse',
    errorTitle: 'Login request rejected',
    errorLead: 'This request cannot be handled, and it is not safe to send you back to the application:',
    goneTitle: 'This login page has expired',
    goneLead: 'This login attempt does not exist (any more). Start again from the application.',
  },
} as const;

function clockTime(unixSeconds: number): string {
  return new Date(unixSeconds * 1000).toISOString().slice(11, 16);
}

export function errorPage(lang: PageLang, message: string): string {
  const text = TEXT[lang];
  return renderPage({
    title: text.errorTitle,
    lang,
    body: `<h1>${text.errorTitle}</h1><p>${text.errorLead}</p><p><strong>${escapeHtml(message)}</strong></p>`,
  });
}

export function gonePage(lang: PageLang): string {
  const text = TEXT[lang];
  return renderPage({ title: text.goneTitle, lang, body: `<h1>${text.goneTitle}</h1><p>${text.goneLead}</p>` });
}

/** Step 1: the QR challenge; the simulated phone scan posts the chosen test user. */
export function challengePage(options: {
  lang: PageLang;
  action: string;
  process: string;
  clientId: string;
  qrDataUrl: string;
  expiresAt: number;
}): string {
  const { lang } = options;
  const text = TEXT[lang];
  const users = TEST_USERS.map((user) => `<option value="${escapeHtml(user.id)}">${escapeHtml(user.id)}</option>`).join(
    '',
  );
  return renderPage({
    title: text.qrTitle,
    lang,
    body: `<h1>${text.qrTitle}</h1><p>${text.qrLead(escapeHtml(options.clientId))}</p>
<p style="text-align:center"><img id="qr" src="${escapeHtml(options.qrDataUrl)}" alt="${text.qrAlt}" width="240" height="240"></p>
<p class="muted" id="qr-valid">${text.qrValid(clockTime(options.expiresAt))}</p>
<h2 style="font-size:1.05rem">${text.simulateTitle}</h2><p class="muted">${text.simulateLead}</p>
<form method="post" action="${escapeHtml(options.action)}">${hiddenInputs({ process: options.process, lang })}
<label for="user">${text.user}</label><select id="user" name="user">${users}</select>
<p><button type="submit" name="action" value="scan">${text.scan}</button><button type="submit" class="secondary" name="action" value="cancel">${text.cancel}</button></p>
</form>`,
  });
}

/** Step 2: the PIN and the consent, listing what the scopes release. */
export function pinPage(options: {
  lang: PageLang;
  action: string;
  process: string;
  clientId: string;
  scopes: readonly string[];
  user: string;
  expiresAt: number;
  invalidPin?: boolean;
}): string {
  const { lang } = options;
  const text = TEXT[lang];
  const items = options.scopes.map((scope) => `<li>${escapeHtml(SCOPE_TEXT[lang][scope] ?? scope)}</li>`).join('');
  const problem = options.invalidPin
    ? `<p role="alert" style="color:#b42318"><strong>${text.pinInvalid}</strong></p>`
    : '';
  return renderPage({
    title: text.pinTitle,
    lang,
    body: `<h1>${text.pinTitle}</h1><p class="muted">${text.signedInAs(escapeHtml(options.user))}</p>
<p>${text.pinLead(escapeHtml(options.clientId))}</p><ul id="claims">${items}</ul>
<p class="muted" id="pin-valid">${text.pinValid(clockTime(options.expiresAt))}</p>${problem}
<form method="post" action="${escapeHtml(options.action)}">${hiddenInputs({ process: options.process, lang })}
<label for="pin">${text.pin}</label><input type="password" id="pin" name="pin" inputmode="numeric" autocomplete="off" maxlength="5">
<p class="muted">${text.pinHint}</p>
<p><button type="submit" name="decision" value="approve">${text.approve}</button><button type="submit" class="secondary" name="decision" value="refuse">${text.refuse}</button></p>
</form>`,
  });
}
