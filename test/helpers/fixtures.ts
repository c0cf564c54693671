let n = 0;
const uniq = () => `${process.pid}-${Date.now().toString(36)}-${++n}`;

/**
 * The standard tenant of the tests: two users, a full key and a few narrow ones, two pipelines,
 * loss reasons, a custom property of every type per object type, a form and a dynamic list.
 * Refs are stable names; ids come back in `refs`.
 */
export function STANDARD_SETUP(): Record<string, any> {
  const types = ['text', 'textarea', 'email', 'phone', 'url', 'number', 'date', 'datetime', 'select', 'multi_select', 'boolean'];
  const options = [
    { value: 'smb', label: 'SMB' },
    { value: 'ent', label: 'Enterprise' },
  ];
  const props = (objectType: string) =>
    types.map((type) => ({
      ref: `${objectType}_${type}`,
      objectType,
      internalName: `${type}_field`,
      label: `${type} field`,
      type,
      group: 'Custom',
      isDefaultInForm: false,
      ...(type === 'select' || type === 'multi_select' ? { options } : {}),
    }));
  return {
    tenant: { name: `Acme ${uniq()}` },
    users: [
      { ref: 'ana', name: 'Ana Souza', email: 'ana@acme.test' },
      { ref: 'bruno', name: 'Bruno Lima', email: 'bruno@acme.test' },
    ],
    apiKeys: [
      { ref: 'full', name: 'Integration', user: 'ana', scopes: ['*'], rateLimit: 1000 },
      { ref: 'ro', name: 'Read only', user: 'bruno', scopes: ['contacts:read'] },
      { ref: 'wo', name: 'Write only', user: 'bruno', scopes: ['contacts:write'], rateLimit: 1000 },
    ],
    pipelines: [
      {
        ref: 'sales',
        name: 'Sales',
        isDefault: true,
        stages: [
          { ref: 'lead', name: 'Lead', probability: 10 },
          { ref: 'proposal', name: 'Proposal', probability: 60 },
          { ref: 'won', name: 'Won', probability: 100, isWonStage: true },
          { ref: 'lost', name: 'Lost', probability: 0, isLostStage: true },
        ],
      },
      {
        ref: 'partners',
        name: 'Partners',
        stages: [
          { ref: 'p_intro', name: 'Intro', probability: 20 },
          { ref: 'p_signed', name: 'Signed', probability: 100, isWonStage: true },
        ],
      },
    ],
    lossReasons: [
      { ref: 'price', name: 'Price too high' },
      { ref: 'timing', name: 'Bad timing' },
    ],
    properties: [...props('contact'), ...props('company'), ...props('deal')],
    forms: [
      {
        ref: 'contact_us',
        name: 'Contact us',
        slug: 'contact-us',
        fields: [
          { name: 'email', label: 'E-mail', type: 'email', required: true, mapsTo: 'email' },
          { name: 'name', label: 'Name', type: 'text', required: true, mapsTo: 'firstName' },
          { name: 'phone', label: 'Phone', type: 'phone', required: false, mapsTo: 'phone' },
          {
            name: 'plan',
            label: 'Plan',
            type: 'select',
            required: false,
            options: [
              { value: 'smb', label: 'SMB' },
              { value: 'ent', label: 'Enterprise' },
            ],
            mapsTo: 'customProperties.contact_select',
          },
        ],
      },
    ],
    lists: [
      {
        ref: 'hot',
        name: 'Hot leads',
        objectType: 'contact',
        kind: 'dynamic',
        filters: { operator: 'AND', conditions: [{ field: 'score', operator: 'gte', value: 80 }] },
      },
    ],
  };
}
