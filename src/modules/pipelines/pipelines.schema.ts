import { Type, type Static } from '@sinclair/typebox';

export const Stage = Type.Object(
  {
    id: Type.String(),
    name: Type.String(),
    displayOrder: Type.Integer({ description: '0-based position within the pipeline' }),
    probability: Type.Number({ description: 'Win probability, percent' }),
    isWonStage: Type.Boolean({ description: 'Moving a deal here wins it' }),
    isLostStage: Type.Boolean({ description: 'Moving a deal here loses it' }),
  },
  { $id: 'Stage', title: 'Stage' },
);
export type StageT = Static<typeof Stage>;

export const Pipeline = Type.Object(
  {
    id: Type.String(),
    name: Type.String(),
    isDefault: Type.Boolean(),
    displayOrder: Type.Integer({ description: '0-based position' }),
    stages: Type.Array(Stage, { description: 'Ordered by displayOrder' }),
  },
  {
    $id: 'Pipeline',
    title: 'Pipeline',
    examples: [
      {
        id: 'pip_7Hq2mX9kL4tR1vB8nC3Z',
        name: 'Sales',
        isDefault: true,
        displayOrder: 0,
        stages: [
          { id: 'stg_2Lk8pQ4mW7xT1nR9vB3C', name: 'Lead', displayOrder: 0, probability: 10, isWonStage: false, isLostStage: false },
          { id: 'stg_9Vb3nC7xK2mQ8tL4pW1R', name: 'Won', displayOrder: 1, probability: 100, isWonStage: true, isLostStage: false },
        ],
      },
    ],
  },
);
export type PipelineT = Static<typeof Pipeline>;
