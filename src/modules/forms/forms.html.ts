import type { FieldIssue } from '../../errors.js';
import type { StoredField } from './forms.schema.js';
import { textsFor, type PageTexts } from './forms.texts.js';

/**
 * The public form pages (CONTRACT A.4): self-contained HTML, no external assets. Every name, label,
 * option and value comes from a setup file or a visitor, so everything is escaped, always inside
 * double-quoted attributes or text, and the Content-Security-Policy allows only this page's own
 * nonce-tagged style and script.
 */
export function escapeHtml(s: unknown): string {
  return String(s ?? '').replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);
}

export interface PageOptions {
  nonce: string;
  /** The tenant's locale (C.5): the page's `lang` and fixed texts; English when absent. */
  locale?: string;
}

export interface FormPage extends PageOptions {
  formName: string;
  fields: StoredField[];
  /** What the visitor sent (urlencoded), to refill the form after errors. */
  entered?: Record<string, unknown>;
  issues?: FieldIssue[];
}

const CSS = `
*,*::before,*::after{box-sizing:border-box}
body{margin:0;font:16px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:#1f2328;background:#f6f8fa}
main{max-width:40rem;margin:2rem auto;padding:1.5rem 2rem;background:#fff;border:1px solid #d0d7de;border-radius:8px}
h1{font-size:1.5rem;margin:0 0 1rem}
.hint{color:#57606a;font-size:.875rem;margin:0 0 1.25rem}
.field{margin:0 0 1.25rem;border:0;padding:0}
label,legend{display:block;font-weight:600;margin:0 0 .25rem;padding:0}
.choice label,.check label{display:inline;font-weight:400;margin-left:.5rem}
.choice,.check{display:flex;align-items:center;margin:.25rem 0}
input:not([type=checkbox]),select,textarea{width:100%;font:inherit;padding:.5rem .625rem;border:1px solid #8c959f;border-radius:6px;background:#fff;color:inherit}
input[type=checkbox]{width:1.125rem;height:1.125rem;margin:0}
textarea{min-height:7rem;resize:vertical}
input:focus-visible,select:focus-visible,textarea:focus-visible,button:focus-visible,a:focus-visible{outline:3px solid #0969da;outline-offset:2px}
[aria-invalid=true]{border-color:#cf222e}
.req{color:#cf222e}
.error{color:#cf222e;font-size:.875rem;margin:.25rem 0 0}
.summary{border:2px solid #cf222e;border-radius:6px;padding:.75rem 1rem;margin:0 0 1.25rem}
.summary h2{font-size:1.0625rem;margin:0 0 .5rem}
.summary ul{margin:0;padding-left:1.25rem}
.summary a{color:#cf222e}
button{font:inherit;font-weight:600;padding:.625rem 1.25rem;border:0;border-radius:6px;background:#1f6feb;color:#fff;cursor:pointer}
button:hover{background:#1158c7}
@media (prefers-color-scheme:dark){body{background:#0d1117;color:#e6edf3}main{background:#161b22;border-color:#30363d}.hint{color:#8d96a0}input:not([type=checkbox]),select,textarea{background:#0d1117;border-color:#6e7681}}
`;

// A datetime-local value has no zone: send it with the visitor's own offset (the server reads a
// zone-less value as UTC, for clients without JavaScript). Names come back on bfcache restore.
const SCRIPT = `
(function(){var f=document.getElementById('crm-form');if(!f)return;
f.addEventListener('submit',function(){f.querySelectorAll('input[type="datetime-local"][name]').forEach(function(el){
if(!el.value)return;var d=new Date(el.value);if(isNaN(d.getTime()))return;
var h=document.createElement('input');h.type='hidden';h.name=el.name;h.value=d.toISOString();h.setAttribute('data-tz','');
el.setAttribute('data-name',el.name);el.removeAttribute('name');f.appendChild(h);});});
window.addEventListener('pageshow',function(){f.querySelectorAll('input[data-tz]').forEach(function(h){h.remove();});
f.querySelectorAll('input[data-name]').forEach(function(el){el.name=el.getAttribute('data-name');el.removeAttribute('data-name');});});
var s=document.getElementById('crm-errors');if(s)s.focus();})();
`;

function page(title: string, body: string, { nonce, locale }: PageOptions, script = false): string {
  return `<!doctype html>
<html lang="${escapeHtml(textsFor(locale).locale)}">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex">
<title>${escapeHtml(title)}</title>
<style nonce="${escapeHtml(nonce)}">${CSS}</style>
</head>
<body>
<main>
${body}
</main>
${script ? `<script nonce="${escapeHtml(nonce)}">${SCRIPT}</script>\n` : ''}</body>
</html>
`;
}

/** Security headers of every form page; `frame-ancestors *` because forms are meant to be embedded. */
export function pageHeaders(nonce: string): Record<string, string> {
  return {
    'content-type': 'text/html; charset=utf-8',
    'content-security-policy': `default-src 'none'; style-src 'nonce-${nonce}'; script-src 'nonce-${nonce}'; img-src data:; form-action 'self'; base-uri 'none'; frame-ancestors *`,
    'x-content-type-options': 'nosniff',
    'cache-control': 'no-store',
  };
}

const INPUT_TYPES: Record<string, string> = {
  text: 'text',
  email: 'email',
  phone: 'tel',
  url: 'url',
  number: 'number',
  date: 'date',
  datetime: 'datetime-local',
};

const AUTOCOMPLETE: Record<string, string> = { email: 'email', phone: 'tel', firstName: 'given-name', lastName: 'family-name' };

function attr(name: string, value: unknown): string {
  return value === undefined || value === null || value === false ? '' : value === true ? ` ${name}` : ` ${name}="${escapeHtml(value)}"`;
}

function enteredList(v: unknown): string[] {
  if (v === undefined || v === null) return [];
  return (Array.isArray(v) ? v : [v]).map(String);
}

/** The value to show again in a refilled input; a datetime already converted to UTC is shown in UTC. */
function enteredText(field: StoredField, v: unknown): string | undefined {
  const list = enteredList(v);
  if (list.length === 0) return undefined;
  const s = list[0];
  if (field.type === 'datetime') {
    const m = /^(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2})?)/.exec(s);
    return m ? m[1] : undefined;
  }
  return s;
}

const requiredMark = '<span class="req" aria-hidden="true"> *</span>';

function renderField(field: StoredField, entered: Record<string, unknown>, error: string | undefined, t: PageTexts): string {
  const id = `f-${field.name}`;
  const errId = `${id}-error`;
  const described = error ? ` aria-invalid="true" aria-describedby="${escapeHtml(errId)}"` : '';
  const errorHtml = error ? `\n<p class="error" id="${escapeHtml(errId)}">${escapeHtml(error)}</p>` : '';
  const label = escapeHtml(field.label) + (field.required ? requiredMark : '');
  const has = Object.prototype.hasOwnProperty.call(entered, field.name);
  const value = has ? entered[field.name] : undefined;
  const v = field.validations ?? {};
  const common = `${attr('id', id)}${attr('name', field.name)}${attr('required', field.required)}${described}`;

  if (field.type === 'multi_select') {
    const chosen = new Set(enteredList(value));
    const boxes = (field.options ?? [])
      .map((o, i) => {
        const oid = `${id}-${i}`;
        return `<div class="choice"><input type="checkbox"${attr('id', oid)}${attr('name', field.name)}${attr('value', o.value)}${attr('checked', chosen.has(o.value))}><label for="${escapeHtml(oid)}">${escapeHtml(o.label)}</label></div>`;
      })
      .join('\n');
    const groupDescribed = error ? ` aria-describedby="${escapeHtml(errId)}"` : '';
    return `<fieldset class="field"${attr('id', id)}${groupDescribed}>\n<legend>${label}</legend>\n${boxes}${errorHtml}\n</fieldset>`;
  }
  if (field.type === 'boolean') {
    const checked = enteredList(value).some((s) => ['on', 'true', '1'].includes(s.toLowerCase()));
    return `<div class="field"><div class="check"><input type="checkbox"${common}${attr('value', 'true')}${attr('checked', checked)}><label for="${escapeHtml(id)}">${label}</label></div>${errorHtml}</div>`;
  }
  const labelHtml = `<label for="${escapeHtml(id)}">${label}</label>`;
  if (field.type === 'select') {
    const current = enteredText(field, value);
    const opts = (field.options ?? [])
      .map((o) => `<option${attr('value', o.value)}${attr('selected', current === o.value)}>${escapeHtml(o.label)}</option>`)
      .join('');
    return `<div class="field">${labelHtml}\n<select${common}><option value="">${escapeHtml(t.choose)}</option>${opts}</select>${errorHtml}</div>`;
  }
  const lengths = `${attr('minlength', v.minLength)}${attr('maxlength', v.maxLength)}`;
  if (field.type === 'textarea') {
    return `<div class="field">${labelHtml}\n<textarea${common}${lengths} rows="5">${escapeHtml(enteredText(field, value) ?? '')}</textarea>${errorHtml}</div>`;
  }
  const type = INPUT_TYPES[field.type] ?? 'text';
  const textual = ['text', 'email', 'tel', 'url'].includes(type);
  const extra =
    (textual ? lengths + attr('pattern', v.pattern) : '') +
    (type === 'number' ? `${attr('min', v.min)}${attr('max', v.max)} step="any" inputmode="decimal"` : '') +
    attr('autocomplete', field.mapsTo ? AUTOCOMPLETE[field.mapsTo] : undefined);
  return `<div class="field">${labelHtml}\n<input type="${type}"${common}${extra}${attr('value', enteredText(field, value))}>${errorHtml}</div>`;
}

/**
 * The form page, also re-rendered with the visitor's entries and the errors. The form has no `action`:
 * it posts to the page's own URL, which stays right behind a proxy adding a path prefix.
 */
export function renderFormPage(p: FormPage): string {
  const { t } = textsFor(p.locale);
  const byField = new Map<string, string>();
  for (const i of p.issues ?? []) if (!byField.has(i.field)) byField.set(i.field, i.message);
  const names = new Set(p.fields.map((f) => f.name));
  let summary = '';
  if (p.issues?.length) {
    const items = p.issues
      .map((i) => {
        const field = p.fields.find((f) => f.name === i.field);
        const text = field ? `${field.label}: ${i.message}` : i.field ? `${i.field}: ${i.message}` : i.message;
        return names.has(i.field) ? `<li><a href="#f-${escapeHtml(i.field)}">${escapeHtml(text)}</a></li>` : `<li>${escapeHtml(text)}</li>`;
      })
      .join('\n');
    summary = `<div class="summary" id="crm-errors" role="alert" tabindex="-1" aria-labelledby="crm-errors-title">\n<h2 id="crm-errors-title">${escapeHtml(t.errorSummary)}</h2>\n<ul>\n${items}\n</ul>\n</div>\n`;
  }
  const anyRequired = p.fields.some((f) => f.required);
  const fields = p.fields.map((f) => renderField(f, p.entered ?? {}, byField.get(f.name), t)).join('\n');
  const body = `<h1>${escapeHtml(p.formName)}</h1>
${anyRequired ? `<p class="hint">${escapeHtml(t.requiredNote[0])}<span class="req">*</span>${escapeHtml(t.requiredNote[1])}</p>\n` : ''}${summary}<form id="crm-form" method="post" accept-charset="utf-8">
${fields}
<button type="submit">${escapeHtml(t.submit)}</button>
</form>`;
  // The title says so first when the page comes back with errors (announced on load).
  return page(p.issues?.length ? `${t.errorTitle}: ${p.formName}` : p.formName, body, p, true);
}

export function renderThankYou(formName: string, opts: PageOptions): string {
  const { t } = textsFor(opts.locale);
  const [before, after] = t.thankYouBody.map(escapeHtml);
  return page(
    `${t.thankYou} — ${formName}`,
    `<div role="status">\n<h1>${escapeHtml(t.thankYou)}!</h1>\n<p>${before}${escapeHtml(formName)}${after}</p>\n</div>`,
    opts,
  );
}

export function renderMessage(title: string, message: string, opts: PageOptions): string {
  return page(title, `<h1>${escapeHtml(title)}</h1>\n<p>${escapeHtml(message)}</p>`, opts);
}
