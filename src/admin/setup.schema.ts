import { Type, type Static } from '@sinclair/typebox';
import { LOCALES, type Locale } from '../modules/forms/forms.texts.js';

// The setup file of CONTRACT A.3: a tenant as an admin configures it in the CRM UI.
const Ref = Type.Optional(Type.String({ minLength: 1, maxLength: 100 }));
const Name = Type.String({ minLength: 1, maxLength: 200 });
const Option = Type.Object(
  { value: Type.String({ minLength: 1, maxLength: 200 }), label: Type.String({ minLength: 1, maxLength: 200 }) },
  { additionalProperties: false },
);
export const PROPERTY_TYPES = ['text', 'textarea', 'email', 'phone', 'url', 'number', 'date', 'datetime', 'select', 'multi_select', 'boolean'] as const;
export const OBJECT_TYPES = ['contact', 'company', 'deal'] as const;
const ObjectType = Type.Union(OBJECT_TYPES.map((t) => Type.Literal(t)));

export const SetupFile = Type.Object(
  {
    tenant: Type.Object(
      {
        name: Name,
        slug: Type.Optional(Type.String({ pattern: '^[a-z0-9]+(-[a-z0-9]+)*$', maxLength: 60 })),
        // C.5: the language of the public form pages (default `en`).
        locale: Type.Optional(Type.Unsafe<Locale>({ type: 'string', enum: [...LOCALES] })),
      },
      { additionalProperties: false },
    ),
    users: Type.Optional(
      Type.Array(Type.Object({ ref: Ref, name: Name, email: Type.String({ minLength: 3, maxLength: 254 }) }, { additionalProperties: false })),
    ),
    apiKeys: Type.Optional(
      Type.Array(
        Type.Object(
          {
            ref: Ref,
            name: Name,
            user: Type.Optional(Type.String()),
            scopes: Type.Array(Type.String(), { minItems: 1 }),
            rateLimit: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000 })),
            expiresAt: Type.Optional(Type.String()),
          },
          { additionalProperties: false },
        ),
      ),
    ),
    pipelines: Type.Optional(
      Type.Array(
        Type.Object(
          {
            ref: Ref,
            name: Name,
            isDefault: Type.Optional(Type.Boolean()),
            stages: Type.Array(
              Type.Object(
                {
                  ref: Ref,
                  name: Name,
                  probability: Type.Number({ minimum: 0, maximum: 100 }),
                  isWonStage: Type.Optional(Type.Boolean()),
                  isLostStage: Type.Optional(Type.Boolean()),
                },
                { additionalProperties: false },
              ),
              { minItems: 1 },
            ),
          },
          { additionalProperties: false },
        ),
      ),
    ),
    lossReasons: Type.Optional(Type.Array(Type.Object({ ref: Ref, name: Name }, { additionalProperties: false }))),
    properties: Type.Optional(
      Type.Array(
        Type.Object(
          {
            ref: Ref,
            objectType: ObjectType,
            internalName: Type.String({ pattern: '^[a-z][a-z0-9_]{0,62}$' }),
            label: Name,
            type: Type.Union(PROPERTY_TYPES.map((t) => Type.Literal(t))),
            group: Type.Optional(Type.String({ maxLength: 200 })),
            isDefaultInForm: Type.Optional(Type.Boolean()),
            options: Type.Optional(Type.Array(Option)),
          },
          { additionalProperties: false },
        ),
      ),
    ),
    forms: Type.Optional(
      Type.Array(
        Type.Object(
          {
            ref: Ref,
            name: Name,
            slug: Type.String({ pattern: '^[a-z0-9]+(-[a-z0-9]+)*$', maxLength: 100 }),
            fields: Type.Array(
              Type.Object(
                {
                  name: Type.String({ pattern: '^[A-Za-z][A-Za-z0-9_]{0,62}$' }),
                  label: Name,
                  type: Type.Union(PROPERTY_TYPES.map((t) => Type.Literal(t))),
                  required: Type.Boolean(),
                  options: Type.Optional(Type.Array(Option)),
                  mapsTo: Type.Optional(Type.String()),
                  validations: Type.Optional(
                    Type.Object(
                      {
                        minLength: Type.Optional(Type.Integer({ minimum: 0 })),
                        maxLength: Type.Optional(Type.Integer({ minimum: 1 })),
                        min: Type.Optional(Type.Number()),
                        max: Type.Optional(Type.Number()),
                        pattern: Type.Optional(Type.String()),
                      },
                      { additionalProperties: false },
                    ),
                  ),
                },
                { additionalProperties: false },
              ),
              { minItems: 1 },
            ),
          },
          { additionalProperties: false },
        ),
      ),
    ),
    lists: Type.Optional(
      Type.Array(
        Type.Object(
          {
            ref: Ref,
            name: Name,
            objectType: ObjectType,
            kind: Type.Union([Type.Literal('static'), Type.Literal('dynamic')]),
            description: Type.Optional(Type.String({ maxLength: 2000 })),
            filters: Type.Optional(Type.Unknown()),
          },
          { additionalProperties: false },
        ),
      ),
    ),
  },
  { additionalProperties: false },
);
export type SetupFileT = Static<typeof SetupFile>;
