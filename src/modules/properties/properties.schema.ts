import { Type, type Static } from '@sinclair/typebox';

export const OBJECT_TYPES = ['contact', 'company', 'deal'] as const;
export const PROPERTY_TYPES = ['text', 'textarea', 'email', 'phone', 'url', 'number', 'date', 'datetime', 'select', 'multi_select', 'boolean'] as const;

const StringEnum = <T extends string[]>(values: [...T], description: string) => Type.Unsafe<T[number]>({ type: 'string', enum: values, description });

export const PropertyOption = Type.Object({ value: Type.String(), label: Type.String() });

/** A custom field definition (spec 2.8); `options` only for select and multi_select. */
export const Property = Type.Object(
  {
    id: Type.String({ description: "The key of this property in records' `customProperties`" }),
    objectType: StringEnum([...OBJECT_TYPES], 'Record type the property belongs to'),
    internalName: Type.String(),
    label: Type.String(),
    type: StringEnum([...PROPERTY_TYPES], 'Value type'),
    group: Type.String(),
    displayOrder: Type.Integer(),
    isDefaultInForm: Type.Boolean(),
    options: Type.Optional(Type.Array(PropertyOption, { description: 'Present for select and multi_select' })),
  },
  {
    $id: 'Property',
    title: 'Property',
    examples: [
      {
        id: 'prp_3Nx8kQ2mL7vT4pR9wB1C',
        objectType: 'contact',
        internalName: 'segment',
        label: 'Segment',
        type: 'select',
        group: 'Sales',
        displayOrder: 0,
        isDefaultInForm: false,
        options: [
          { value: 'smb', label: 'SMB' },
          { value: 'ent', label: 'Enterprise' },
        ],
      },
    ],
  },
);
export type PropertyT = Static<typeof Property>;

export const PropertyListQuery = Type.Object(
  { objectType: StringEnum([...OBJECT_TYPES], 'Required: `contact`, `company` or `deal`') },
  { additionalProperties: false },
);
export type PropertyListQueryT = Static<typeof PropertyListQuery>;
