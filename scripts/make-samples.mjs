#!/usr/bin/env node
/* global URL, console */
// Writes samples/contract.pdf: a one-page sample agreement (pdf-lib, classic xref table, fixed
// dates so that the file is reproducible). Run: node scripts/make-samples.mjs
import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { PDFDocument, StandardFonts, rgb } from 'pdf-lib';

const out = fileURLToPath(new URL('../samples/contract.pdf', import.meta.url));
const fixedDate = new Date('2025-01-06T09:00:00Z');

const sections = [
  [
    '1. Parties',
    'This agreement is made between Example Supplier B.V. ("the Supplier") and Sample Customer Ltd. ("the Customer"). It is a sample document for trying out esign and carries no legal meaning.',
  ],
  [
    '2. Services',
    "The Supplier provides hosting, monitoring and support for the Customer's document-signing workflow, as described in the service description attached to the order form.",
  ],
  [
    '3. Service levels',
    'The Supplier aims for 99.9% monthly availability. Incidents are acknowledged within four business hours and resolved or worked around within two business days.',
  ],
  [
    '4. Fees and payment',
    'Fees are invoiced monthly in advance and are payable within thirty days of the invoice date. Prices exclude VAT.',
  ],
  [
    '5. Term and termination',
    'This agreement runs for twelve months from the date of the last signature and renews for successive twelve-month terms unless either party gives notice of at least sixty days.',
  ],
];

const doc = await PDFDocument.create();
doc.setTitle('Sample service agreement');
doc.setAuthor('esign samples');
doc.setSubject('A sample document for esign');
doc.setCreator('scripts/make-samples.mjs');
doc.setProducer('pdf-lib');
doc.setCreationDate(fixedDate);
doc.setModificationDate(fixedDate);

const regular = await doc.embedFont(StandardFonts.Helvetica);
const bold = await doc.embedFont(StandardFonts.HelveticaBold);
const page = doc.addPage([595.28, 841.89]);
const margin = 64;
const width = page.getWidth() - 2 * margin;
let y = page.getHeight() - margin - 8;

function wrap(text, font, size) {
  const lines = [];
  let line = '';
  for (const word of text.split(' ')) {
    const candidate = line ? `${line} ${word}` : word;
    if (font.widthOfTextAtSize(candidate, size) > width && line) {
      lines.push(line);
      line = word;
    } else line = candidate;
  }
  if (line) lines.push(line);
  return lines;
}

function write(text, font, size, gapAfter) {
  for (const line of wrap(text, font, size)) {
    page.drawText(line, { x: margin, y, size, font, color: rgb(0.1, 0.1, 0.1) });
    y -= size * 1.45;
  }
  y -= gapAfter;
}

write('Sample service agreement', bold, 20, 6);
write('Agreement no. SA-2025-001 · Effective on the date of the last signature', regular, 9.5, 18);
for (const [heading, body] of sections) {
  write(heading, bold, 11.5, 2);
  write(body, regular, 10.5, 12);
}
y -= 24;
page.drawText('For the Supplier', { x: margin, y, size: 10, font: bold });
page.drawText('For the Customer', { x: margin + width / 2, y, size: 10, font: bold });
y -= 48;
for (const x of [margin, margin + width / 2]) {
  page.drawLine({ start: { x, y }, end: { x: x + width / 2 - 24, y }, thickness: 0.5, color: rgb(0.4, 0.4, 0.4) });
}

writeFileSync(out, await doc.save({ useObjectStreams: false }));
console.log(`wrote ${out}`);
