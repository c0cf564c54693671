import { Type, type Static } from '@sinclair/typebox';
import { Timestamp } from '../../http/schemas.js';

export const DEFAULT_TAG_COLOR = '#e53935'; // the theme's red

const Color = Type.String({ pattern: '^#[0-9a-fA-F]{6}$', description: 'Hex color `#rrggbb`', examples: ['#1e88e5'] });
const Name = Type.String({ minLength: 1, maxLength: 100, description: 'Unique per tenant, case-insensitive' });

export const Tag = Type.Object(
  { id: Type.String(), name: Type.String(), color: Type.String(), createdAt: Timestamp, updatedAt: Timestamp },
  {
    $id: 'Tag',
    title: 'Tag',
    examples: [{ id: 'tag_8Fq2…', name: 'VIP', color: '#e53935', createdAt: '2026-11-22T10:00:00.000Z', updatedAt: '2026-11-22T10:00:00.000Z' }],
  },
);
export type TagT = Static<typeof Tag>;

export const TagCreate = Type.Object(
  { name: Name, color: Type.Optional(Color) },
  { additionalProperties: false, examples: [{ name: 'VIP', color: '#1e88e5' }] },
);
export type TagCreateT = Static<typeof TagCreate>;
export const TagUpdate = Type.Object({ name: Type.Optional(Name), color: Type.Optional(Color) }, { additionalProperties: false });
export type TagUpdateT = Static<typeof TagUpdate>;
export const TagListQuery = Type.Object(
  { search: Type.Optional(Type.String({ maxLength: 200, description: 'Substring of the name, ignoring case and accents' })) },
  { additionalProperties: false },
);
