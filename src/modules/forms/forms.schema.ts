import { Type, type Static } from '@sinclair/typebox';
import { CursorParam, Envelope, Nullable, PageSizeParams, Timestamp } from '../../http/schemas.js';

const FIELD_TYPES = ['text', 'textarea', 'email', 'phone', 'url', 'number', 'date', 'datetime', 'select', 'multi_select', 'boolean'] as const;
const FieldType = Type.Union(
  FIELD_TYPES.map((t) => Type.Literal(t)),
  { description: 'Property type of the value' },
);

const Option = Type.Object({ value: Type.String(), label: Type.String() });

export const FieldValidations = Type.Object(
  {
    minLength: Type.Optional(Type.Integer({ description: 'Minimum characters of a text value' })),
    maxLength: Type.Optional(Type.Integer({ description: 'Maximum characters of a text value' })),
    min: Type.Optional(Type.Number({ description: 'Minimum of a number value' })),
    max: Type.Optional(Type.Number({ description: 'Maximum of a number value' })),
    pattern: Type.Optional(Type.String({ description: 'Regular expression the whole text value must match (as HTML `pattern`)' })),
  },
  { title: 'FormFieldValidations' },
);

const fieldBase = {
  name: Type.String({ description: 'Key of the value in submissions and in the intake body' }),
  label: Type.String(),
  type: FieldType,
  required: Type.Boolean(),
};

export const FormFieldSummary = Type.Object(fieldBase, { title: 'FormFieldSummary' });
export const FormFieldFull = Type.Object(
  {
    ...fieldBase,
    options: Type.Optional(Type.Array(Option, { description: 'Choices of `select` and `multi_select` fields' })),
    validations: Type.Optional(FieldValidations),
  },
  { title: 'FormField' },
);

const formBase = {
  id: Type.String(),
  name: Type.String(),
  slug: Type.String({ description: 'Unique per tenant' }),
  embedUrl: Type.String({ description: 'Full URL of the public form: `{base}/f/<tenantSlug>/<formSlug>`; GET serves the HTML form, POST submits it' }),
};
const EXAMPLE = {
  id: 'frm_4ZkQ9aT2mX8bW1cR7yLp',
  name: 'Contact us',
  slug: 'contact-us',
  embedUrl: 'https://crm.example.com/f/acme-ltda-x8k2p1/contact-us',
  submissionsCount: 12,
  createdAt: '2026-11-22T10:00:00.000Z',
};

export const Form = Type.Object(
  { ...formBase, fields: Type.Array(FormFieldSummary), submissionsCount: Type.Integer(), createdAt: Timestamp },
  {
    $id: 'Form',
    title: 'Form',
    examples: [{ ...EXAMPLE, fields: [{ name: 'email', label: 'E-mail', type: 'email', required: true }] }],
  },
);
export type FormT = Static<typeof Form>;

export const FormDetail = Type.Object(
  { ...formBase, fields: Type.Array(FormFieldFull), submissionsCount: Type.Integer(), createdAt: Timestamp },
  {
    $id: 'FormDetail',
    title: 'FormDetail',
    description: 'A form with its full field structure (select options and validations)',
    examples: [
      {
        ...EXAMPLE,
        fields: [
          { name: 'email', label: 'E-mail', type: 'email', required: true },
          { name: 'plan', label: 'Plan', type: 'select', required: false, options: [{ value: 'pro', label: 'Pro' }] },
          { name: 'zip', label: 'ZIP', type: 'text', required: false, validations: { pattern: '\\d{5}-?\\d{3}' } },
        ],
      },
    ],
  },
);
export type FormDetailT = Static<typeof FormDetail>;

export const Submission = Type.Object(
  {
    id: Type.String(),
    formId: Type.String(),
    contactId: Nullable(Type.String({ description: 'Contact created or updated by the submission' })),
    values: Nullable(
      Type.Record(Type.String(), Type.Unknown(), {
        description: 'Field name → submitted value, normalized as its field type; `null` once its contact was erased (POST /contacts/:id/erase)',
      }),
    ),
    metadata: Nullable(
      Type.Object(
        {
          ipAddress: Nullable(Type.String()),
          userAgent: Nullable(Type.String()),
          referrer: Nullable(Type.String()),
        },
        { description: 'Where the submission came from; `null` once its contact was erased' },
      ),
    ),
    createdAt: Timestamp,
  },
  {
    $id: 'FormSubmission',
    title: 'FormSubmission',
    examples: [
      {
        id: 'sub_9bT3kQ1mZ7xW2cR8yLpA',
        formId: 'frm_4ZkQ9aT2mX8bW1cR7yLp',
        contactId: 'con_3kT9aZ1mQ7xW2cR8yLpB',
        values: { email: 'maria@example.com', name: 'Maria', plan: 'pro' },
        metadata: { ipAddress: '203.0.113.7', userAgent: 'Mozilla/5.0 …', referrer: 'https://www.example.com/contact' },
        createdAt: '2026-11-22T10:00:00.000Z',
      },
    ],
  },
);
export type SubmissionT = Static<typeof Submission>;

export const SubmissionPage = Envelope(Submission, 'FormSubmissionPage');

export const SubmissionsQuery = Type.Object(
  {
    page: Type.Optional(Type.Integer({ minimum: 1, description: 'Page number, 1-based (default 1)' })),
    ...PageSizeParams('limit', 'Submissions per page; `pagination.pageSize` echoes it'),
    cursor: CursorParam,
  },
  { additionalProperties: false },
);
export type SubmissionsQueryT = Static<typeof SubmissionsQuery>;

export const PublicFormParams = Type.Object({
  tenantSlug: Type.String({ description: 'Slug of the tenant (tenants may share form slugs)' }),
  slug: Type.String({ description: 'Slug of the form, unique per tenant' }),
});

export const IntakeBody = Type.Record(Type.String(), Type.Unknown(), {
  description:
    'Field name → value. JSON values must have their field type (not coerced); urlencoded values are text and are converted per field type (numbers, `on`/`true`/`1` for booleans, repeated keys for multi_select).',
  examples: [{ email: 'maria@example.com', name: 'Maria', plan: 'pro' }],
});

export const IntakeResult = Type.Object(
  { submissionId: Type.String(), contactId: Type.String() },
  { title: 'FormIntakeResult', examples: [{ submissionId: 'sub_9bT3kQ1mZ7xW2cR8yLpA', contactId: 'con_3kT9aZ1mQ7xW2cR8yLpB' }] },
);
export type IntakeResultT = Static<typeof IntakeResult>;

/** A form field as stored by setup (`forms.fields` JSON); `mapsTo` is resolved to property ids. */
export interface StoredField {
  name: string;
  label: string;
  type: (typeof FIELD_TYPES)[number];
  required: boolean;
  options?: { value: string; label: string }[];
  validations?: { minLength?: number; maxLength?: number; min?: number; max?: number; pattern?: string };
  mapsTo?: string;
}
