/** What an ASiC container (ASiC-E and ASiC-S, CAdES and XAdES alike) records of a data entry's name: its MIME type and its URI. */
const MIME_TYPES: Record<string, string> = {
  txt: 'text/plain',
  xml: 'text/xml',
  html: 'text/html',
  csv: 'text/csv',
  json: 'application/json',
  pdf: 'application/pdf',
  png: 'image/png',
  jpg: 'image/jpeg',
  jpeg: 'image/jpeg',
  gif: 'image/gif',
  zip: 'application/zip',
  docx: 'application/vnd.openxmlformats-officedocument.wordprocessingml.document',
  xlsx: 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet',
  odt: 'application/vnd.oasis.opendocument.text',
};

/** The MIME type a container records for an entry, from its name's extension (else application/octet-stream). */
export function mimeTypeOf(name: string): string {
  const dot = name.lastIndexOf('.');
  return (dot >= 0 && MIME_TYPES[name.slice(dot + 1).toLowerCase()]) || 'application/octet-stream';
}

/** An entry name as a relative URI: each segment percent-encoded. */
export function uriOf(name: string): string {
  return name.split('/').map(encodeURIComponent).join('/');
}
