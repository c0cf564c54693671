import { Type, type Static } from '@sinclair/typebox';

export const User = Type.Object(
  {
    id: Type.String({ description: 'Use as `ownerId`, `assignedToId` and the like' }),
    name: Type.String(),
    email: Type.String({ description: 'Lower-case; unique within the tenant' }),
  },
  { $id: 'User', title: 'User', examples: [{ id: 'usr_3Fk9pL2mQ8xV1nB7tR4Z', name: 'Ana Souza', email: 'ana@acme.test' }] },
);
export type UserT = Static<typeof User>;

export const LossReason = Type.Object(
  {
    id: Type.String({ description: "Use as a deal's `lossReasonId`" }),
    name: Type.String(),
  },
  { $id: 'LossReason', title: 'LossReason', examples: [{ id: 'lsr_8Qw2nX5kT1mL9vC3pB7R', name: 'Price too high' }] },
);
export type LossReasonT = Static<typeof LossReason>;
