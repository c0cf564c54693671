// The demo tenant of `crm demo` (and of the first `crm serve` on an empty embedded database): a Brazilian
// B2B software company with its sales team, pipelines, custom properties, a web form and lists, plus
// realistic records created through the modules' services, so normalization, events and the
// dynamic-list change marks apply exactly as for API writes.
import type { Config } from '../config.js';
import type { Database } from '../db/index.js';
import { contextFor, type Ctx } from '../http/context.js';
import { createActivity } from '../modules/activities/activities.service.js';
import { createCompany } from '../modules/companies/companies.service.js';
import { createContact } from '../modules/contacts/contacts.service.js';
import { createDeal } from '../modules/deals/deals.service.js';
import { findPublicForm, submitForm } from '../modules/forms/forms.service.js';
import { addMembers } from '../modules/lists/lists.service.js';
import { createProposal, updateProposal } from '../modules/proposals/proposals.service.js';
import { createTag } from '../modules/tags/tags.service.js';
import { FIRST_NAMES, FREE_MAIL, JOB_TITLES, LAST_NAMES, Rand, asciiSlug, landlineFor, mobileFor, sampleCompanies, CITIES } from './demo-data.js';
import type { SetupResult } from './setup.js';
import { tenantSlug } from './tenants.repo.js';

const READ_SCOPES = [
  'contacts:read',
  'companies:read',
  'deals:read',
  'activities:read',
  'proposals:read',
  'pipelines:read',
  'properties:read',
  'tags:read',
  'lists:read',
  'forms:read',
  'forms:submissions:read',
  'users:read',
];

const opt = (pairs: [string, string][]) => pairs.map(([value, label]) => ({ value, label }));

/** The setup file of the demo tenant (CONTRACT A.3). */
const DEMO_SETUP_FILE: Record<string, unknown> = {
  tenant: { name: 'Ipê Digital Soluções Ltda', locale: 'pt-BR' },
  users: [
    { ref: 'ana', name: 'Ana Souza', email: 'ana.souza@ipedigital.com.br' },
    { ref: 'bruno', name: 'Bruno Lima', email: 'bruno.lima@ipedigital.com.br' },
    { ref: 'carla', name: 'Carla Mendes', email: 'carla.mendes@ipedigital.com.br' },
    { ref: 'diego', name: 'Diego Ferreira', email: 'diego.ferreira@ipedigital.com.br' },
    { ref: 'elisa', name: 'Elisa Rocha', email: 'elisa.rocha@ipedigital.com.br' },
  ],
  apiKeys: [
    { ref: 'full', name: 'Integração (acesso total)', user: 'ana', scopes: ['*'], rateLimit: 1000 },
    { ref: 'readonly', name: 'Painel de BI (somente leitura)', user: 'bruno', scopes: READ_SCOPES, rateLimit: 300 },
  ],
  pipelines: [
    {
      ref: 'sales',
      name: 'Vendas',
      isDefault: true,
      stages: [
        { ref: 'prospeccao', name: 'Prospecção', probability: 10 },
        { ref: 'qualificacao', name: 'Qualificação', probability: 30 },
        { ref: 'proposta', name: 'Proposta enviada', probability: 60 },
        { ref: 'negociacao', name: 'Negociação', probability: 80 },
        { ref: 'ganho', name: 'Ganho', probability: 100, isWonStage: true },
        { ref: 'perdido', name: 'Perdido', probability: 0, isLostStage: true },
      ],
    },
    {
      ref: 'partners',
      name: 'Parcerias',
      stages: [
        { ref: 'p_contato', name: 'Contato inicial', probability: 20 },
        { ref: 'p_avaliacao', name: 'Avaliação técnica', probability: 50 },
        { ref: 'p_assinado', name: 'Contrato assinado', probability: 100, isWonStage: true },
        { ref: 'p_descartado', name: 'Descartado', probability: 0, isLostStage: true },
      ],
    },
  ],
  lossReasons: [
    { ref: 'preco', name: 'Preço acima do orçamento' },
    { ref: 'concorrente', name: 'Escolheu um concorrente' },
    { ref: 'sem_orcamento', name: 'Sem orçamento no momento' },
    { ref: 'sem_resposta', name: 'Cliente parou de responder' },
    { ref: 'timing', name: 'Momento inadequado' },
  ],
  properties: [
    {
      ref: 'contact_segment',
      objectType: 'contact',
      internalName: 'segmento',
      label: 'Segmento',
      type: 'select',
      group: 'Qualificação',
      isDefaultInForm: true,
      options: opt([
        ['pme', 'PME'],
        ['medio', 'Médio porte'],
        ['enterprise', 'Enterprise'],
      ]),
    },
    { ref: 'contact_role', objectType: 'contact', internalName: 'cargo', label: 'Cargo', type: 'text', group: 'Perfil', isDefaultInForm: true },
    { ref: 'contact_birthday', objectType: 'contact', internalName: 'aniversario', label: 'Aniversário', type: 'date', group: 'Perfil' },
    { ref: 'contact_newsletter', objectType: 'contact', internalName: 'aceita_newsletter', label: 'Aceita newsletter', type: 'boolean', group: 'Marketing' },
    { ref: 'contact_linkedin', objectType: 'contact', internalName: 'linkedin', label: 'LinkedIn', type: 'url', group: 'Perfil' },
    {
      ref: 'company_employees',
      objectType: 'company',
      internalName: 'numero_funcionarios',
      label: 'Número de funcionários',
      type: 'number',
      group: 'Firmografia',
    },
    {
      ref: 'company_revenue',
      objectType: 'company',
      internalName: 'faturamento_anual',
      label: 'Faturamento anual',
      type: 'select',
      group: 'Firmografia',
      options: opt([
        ['ate_4m', 'Até R$ 4,8 mi'],
        ['4m_50m', 'R$ 4,8 mi a R$ 50 mi'],
        ['50m_300m', 'R$ 50 mi a R$ 300 mi'],
        ['300m_mais', 'Acima de R$ 300 mi'],
      ]),
    },
    { ref: 'company_customer_since', objectType: 'company', internalName: 'cliente_desde', label: 'Cliente desde', type: 'date', group: 'Relacionamento' },
    {
      ref: 'company_finance_email',
      objectType: 'company',
      internalName: 'email_financeiro',
      label: 'E-mail do financeiro',
      type: 'email',
      group: 'Relacionamento',
    },
    {
      ref: 'deal_source',
      objectType: 'deal',
      internalName: 'origem',
      label: 'Origem',
      type: 'select',
      group: 'Marketing',
      options: opt([
        ['inbound', 'Inbound'],
        ['outbound', 'Outbound'],
        ['indicacao', 'Indicação'],
        ['evento', 'Evento'],
        ['parceiro', 'Parceiro'],
      ]),
    },
    {
      ref: 'deal_products',
      objectType: 'deal',
      internalName: 'produtos',
      label: 'Produtos',
      type: 'multi_select',
      group: 'Escopo',
      options: opt([
        ['erp', 'ERP'],
        ['crm', 'CRM'],
        ['bi', 'BI'],
        ['suporte', 'Suporte premium'],
      ]),
    },
    { ref: 'deal_demo_at', objectType: 'deal', internalName: 'data_demo', label: 'Data da demonstração', type: 'datetime', group: 'Escopo' },
    { ref: 'deal_competitor', objectType: 'deal', internalName: 'concorrente', label: 'Concorrente', type: 'text', group: 'Escopo' },
    { ref: 'deal_notes', objectType: 'deal', internalName: 'observacoes', label: 'Observações', type: 'textarea', group: 'Escopo' },
  ],
  forms: [
    {
      ref: 'fale_conosco',
      name: 'Fale com um especialista',
      slug: 'fale-conosco',
      fields: [
        { name: 'email', label: 'E-mail corporativo', type: 'email', required: true, mapsTo: 'email' },
        { name: 'nome', label: 'Nome', type: 'text', required: true, mapsTo: 'firstName', validations: { minLength: 2, maxLength: 80 } },
        { name: 'sobrenome', label: 'Sobrenome', type: 'text', required: false, mapsTo: 'lastName' },
        { name: 'telefone', label: 'Telefone / WhatsApp', type: 'phone', required: false, mapsTo: 'phone' },
        {
          name: 'segmento',
          label: 'Porte da empresa',
          type: 'select',
          required: false,
          options: opt([
            ['pme', 'PME'],
            ['medio', 'Médio porte'],
            ['enterprise', 'Enterprise'],
          ]),
          mapsTo: 'customProperties.contact_segment',
        },
        { name: 'cargo', label: 'Cargo', type: 'text', required: false, mapsTo: 'customProperties.contact_role' },
        { name: 'mensagem', label: 'Como podemos ajudar?', type: 'textarea', required: false, validations: { maxLength: 2000 } },
      ],
    },
  ],
  lists: [
    {
      ref: 'evento',
      name: 'Convidados — Encontro de Clientes 2026',
      objectType: 'contact',
      kind: 'static',
      description: 'Lista de convidados do evento anual em São Paulo',
    },
    { ref: 'estrategicos', name: 'Contas estratégicas', objectType: 'company', kind: 'static', description: 'Clientes com plano de conta dedicado' },
    {
      ref: 'leads_quentes',
      name: 'Leads quentes',
      objectType: 'contact',
      kind: 'dynamic',
      description: 'Score a partir de 80',
      filters: { operator: 'AND', conditions: [{ field: 'score', operator: 'gte', value: 80 }] },
    },
    {
      ref: 'enterprise_newsletter',
      name: 'Enterprise que aceitam newsletter',
      objectType: 'contact',
      kind: 'dynamic',
      filters: {
        operator: 'AND',
        conditions: [
          { field: 'customProperties.contact_segment', operator: 'eq', value: 'enterprise' },
          { field: 'customProperties.contact_newsletter', operator: 'eq', value: true },
        ],
      },
    },
  ],
};

/** The setup file of the demo tenant (CONTRACT A.3), a fresh copy. */
export function DEMO_SETUP(): Record<string, unknown> {
  return structuredClone(DEMO_SETUP_FILE);
}

const COUNTS = { companies: 50, contacts: 200, deals: 80, activities: 240, proposals: 15, submissions: 15 };

const SALES_STAGES = ['prospeccao', 'qualificacao', 'proposta', 'negociacao', 'ganho', 'perdido'];
const PARTNER_STAGES = ['p_contato', 'p_avaliacao', 'p_assinado', 'p_descartado'];
const PRODUCTS = [
  { name: 'Licença ERP Ipê — módulo financeiro', unit: 'licença/mês', rate: 189.9 },
  { name: 'Licença CRM Ipê', unit: 'usuário/mês', rate: 79.9 },
  { name: 'BI e painéis gerenciais', unit: 'licença/mês', rate: 249 },
  { name: 'Implantação e migração de dados', unit: 'projeto', rate: 12500 },
  { name: 'Treinamento in company', unit: 'hora', rate: 350 },
  { name: 'Suporte premium 24x7', unit: 'mês', rate: 1490 },
];
const ACTIVITY_TEMPLATES: Record<string, string[]> = {
  task: ['Enviar proposta revisada', 'Preparar demonstração personalizada', 'Atualizar escopo do projeto', 'Confirmar reunião com o financeiro'],
  call: ['Ligação de qualificação', 'Follow-up da proposta', 'Alinhamento de prazos', 'Ligação com o decisor'],
  email: ['Envio do material institucional', 'Resumo da reunião', 'Envio do contrato para assinatura', 'Convite para o webinar'],
  meeting: ['Reunião de diagnóstico', 'Demonstração do produto', 'Reunião de negociação', 'Kick-off da implantação'],
  note: ['Notas da reunião', 'Contexto da conta', 'Riscos identificados', 'Próximos passos'],
  whatsapp: ['Mensagem de confirmação da agenda', 'Envio do link da demonstração', 'Lembrete do pagamento'],
  linkedin: ['Conexão enviada', 'Mensagem de apresentação', 'Comentário em publicação'],
  custom: ['Visita presencial', 'Envio de brinde', 'Pesquisa de satisfação'],
};
const NOTES = [
  '<p>Cliente usa planilhas para o financeiro e quer <strong>integração com o banco</strong>.</p><ul><li>Decisora: diretora financeira</li><li>Prazo: próximo trimestre</li></ul>',
  '<p>Pediu referência de um cliente do mesmo setor. Enviar case da <em>Cerrado Agro</em>.</p>',
  '<p>Concorrente ofereceu desconto de 15%. Avaliar contrapartida com prazo de contrato maior.</p>',
  '<p>Equipe de TI preocupada com a migração dos dados legados (ERP próprio em Delphi).</p>',
];

/** ISO instant `days` from now (negative: past), at a business hour. */
function dayOffset(days: number, hour = 10): string {
  const d = new Date();
  d.setUTCDate(d.getUTCDate() + days);
  d.setUTCHours(hour + 3, 0, 0, 0); // Brasília (UTC−3) business hours
  return d.toISOString();
}

/** What every step of the seeding shares: the seeded random source, the setup's refs and who acts. */
interface Seeding {
  rand: Rand;
  refs: Record<string, string>;
  /** The sales team's user ids; records are spread among them. */
  users: string[];
  /** The context of the tenant's first user. */
  ctx: Ctx;
  /** The context of `userId`, for records created in their name. */
  as(userId: string): Ctx;
  step(m: string): void;
}

type SeededCompany = Awaited<ReturnType<typeof createCompany>> & { domain: string; ddd: number; customer: boolean };
type SeededContact = Awaited<ReturnType<typeof createContact>>;
type SeededDeal = Awaited<ReturnType<typeof createDeal>>;

/**
 * Creates the demo's records through the services. Runs inside the caller's transaction when `database.db`
 * is one (the CLI runs setup and seeding in one transaction, so a failure leaves nothing behind).
 */
export async function seedDemoRecords(database: Database, config: Config, setup: SetupResult, progress: (m: string) => void): Promise<void> {
  const refs = setup.refs;
  const s: Seeding = {
    rand: new Rand(2026),
    refs,
    users: ['ana', 'bruno', 'carla', 'diego', 'elisa'].map((r) => refs[r]),
    ctx: contextFor(database, config, setup.tenantId, refs.ana),
    as: (userId) => contextFor(database, config, setup.tenantId, userId),
    step: (m) => progress(`demo: ${m}`),
  };
  const tags = await seedTags(s);
  const companies = await seedCompanies(s, tags);
  const contacts = await seedContacts(s, tags, companies);
  const deals = await seedDeals(s, tags, contacts, companies);
  await seedActivities(s, contacts, deals);
  await seedProposals(s, contacts, deals);
  await seedListMembers(s, contacts, companies);
  await seedSubmissions(s, database, setup.tenantId, contacts, companies);
}

/** The tags, by name to id. */
async function seedTags({ ctx, step }: Seeding): Promise<Record<string, string>> {
  const tagNames = [
    ['Cliente', '#2e7d32'],
    ['Prospect', '#1e88e5'],
    ['VIP', '#f9a825'],
    ['Parceiro', '#6a1b9a'],
    ['Encontro 2026', '#00897b'],
    ['Inativo', '#757575'],
  ];
  const tags: Record<string, string> = {};
  for (const [name, color] of tagNames) tags[name] = (await createTag(ctx, { name, color })).id;
  step(`${tagNames.length} tags`);
  return tags;
}

/** Companies: valid CNPJs, domains and landlines. */
async function seedCompanies({ rand, refs, users, ctx, step }: Seeding, tags: Record<string, string>): Promise<SeededCompany[]> {
  const companies = [];
  for (const [i, c] of sampleCompanies(rand, COUNTS.companies).entries()) {
    const customer = i % 3 === 0;
    const created = await createCompany(ctx, {
      name: c.name,
      cnpj: c.cnpj,
      website: `https://www.${c.domain}`,
      domain: c.domain,
      phone: landlineFor(1_000 + i * 37, c.city.ddd),
      industry: c.industry,
      ownerId: users[i % users.length],
      tags: customer ? [tags.Cliente, ...(i % 9 === 0 ? [tags.VIP] : [])] : i % 10 === 1 ? [tags.Parceiro] : [tags.Prospect],
      customProperties: {
        [refs.company_employees]: rand.pick([8, 15, 40, 120, 350, 900, 2500]),
        [refs.company_revenue]: rand.pick(['ate_4m', '4m_50m', '50m_300m', '300m_mais']),
        ...(customer
          ? { [refs.company_customer_since]: dayOffset(-rand.int(60, 1500)).slice(0, 10), [refs.company_finance_email]: `financeiro@${c.domain}` }
          : {}),
      },
    });
    companies.push({ ...created, domain: c.domain, ddd: c.city.ddd, customer });
  }
  step(`${companies.length} companies`);
  return companies;
}

/** Contacts: most at their company's domain (associated by the e-mail-domain rule), some on free mail. */
async function seedContacts({ rand, refs, users, as, step }: Seeding, tags: Record<string, string>, companies: SeededCompany[]): Promise<SeededContact[]> {
  const contacts = [];
  const usedEmails = new Set<string>();
  for (let i = 0; i < COUNTS.contacts; i++) {
    const first = rand.pick(FIRST_NAMES);
    const last = rand.pick(LAST_NAMES);
    const company = i < 150 ? companies[i % companies.length] : undefined;
    const local = `${asciiSlug(first)}.${asciiSlug(last)}`;
    let email = company ? `${local}@${company.domain}` : `${local}${rand.int(1, 999)}@${rand.pick(FREE_MAIL)}`;
    if (usedEmails.has(email)) email = email.replace('@', `${i}@`);
    usedEmails.add(email);
    const score = rand.int(0, 100);
    const created = await createContact(as(users[i % users.length]), {
      firstName: first,
      lastName: last,
      email: i % 4 === 0 ? email.toUpperCase() : email, // normalized to lower case by the service
      phone: i % 7 === 6 ? null : mobileFor(i * 13 + 7, company?.ddd ?? rand.pick(CITIES).ddd),
      ownerId: users[i % users.length],
      score,
      tags: score >= 85 ? [tags.VIP] : i % 5 === 0 ? [tags.Prospect] : [],
      customProperties: {
        [refs.contact_segment]: rand.pick(['pme', 'pme', 'medio', 'enterprise']),
        [refs.contact_role]: rand.pick(JOB_TITLES),
        [refs.contact_newsletter]: rand.chance(0.6),
        ...(rand.chance(0.4)
          ? { [refs.contact_birthday]: `19${rand.int(60, 99)}-${String(rand.int(1, 12)).padStart(2, '0')}-${String(rand.int(1, 28)).padStart(2, '0')}` }
          : {}),
        ...(rand.chance(0.3) ? { [refs.contact_linkedin]: `https://www.linkedin.com/in/${local.replace('.', '-')}-${i}` } : {}),
      },
    });
    contacts.push(created);
  }
  step(`${contacts.length} contacts`);
  return contacts;
}

/** Deals across both pipelines and every stage, won and lost ones included. */
async function seedDeals(
  { rand, refs, users, as, step }: Seeding,
  tags: Record<string, string>,
  contacts: SeededContact[],
  companies: SeededCompany[],
): Promise<SeededDeal[]> {
  const deals = [];
  for (let i = 0; i < COUNTS.deals; i++) {
    const partner = i % 8 === 7;
    const stageRef = partner ? PARTNER_STAGES[i % PARTNER_STAGES.length] : SALES_STAGES[i % SALES_STAGES.length];
    const contact = contacts[(i * 3) % 150];
    const company = companies.find((c) => c.id === contact.companyId) ?? companies[i % companies.length];
    const won = stageRef === 'ganho' || stageRef === 'p_assinado';
    const lost = stageRef === 'perdido' || stageRef === 'p_descartado';
    const products = rand.sample(['erp', 'crm', 'bi', 'suporte'], rand.int(1, 3));
    const deal = await createDeal(as(users[i % users.length]), {
      title: partner ? `Parceria de revenda — ${company.name}` : `${products.map((p) => p.toUpperCase()).join(' + ')} — ${company.name}`,
      pipelineId: partner ? refs.partners : refs.sales,
      stageId: refs[stageRef],
      value: partner ? null : rand.int(30, 900) * 100 + (i % 2 ? 0.5 : 0),
      currency: 'BRL',
      contactId: contact.id,
      companyId: company.id,
      ownerId: users[i % users.length],
      expectedCloseDate: dayOffset(rand.int(-30, 120)).slice(0, 10),
      tags: won ? [tags.Cliente] : i % 6 === 0 ? [tags.VIP] : [],
      customProperties: {
        [refs.deal_source]: partner ? 'parceiro' : rand.pick(['inbound', 'outbound', 'indicacao', 'evento']),
        ...(partner ? {} : { [refs.deal_products]: products }),
        ...(i % 3 === 0 ? { [refs.deal_demo_at]: dayOffset(rand.int(-20, 20), 14) } : {}),
        ...(lost || i % 5 === 0 ? { [refs.deal_competitor]: rand.pick(['TOTVS', 'Omie', 'Bling', 'Sankhya', 'Conta Azul']) } : {}),
      },
      ...(won ? { isWon: true, closedAt: dayOffset(-rand.int(1, 90)) } : {}),
      ...(lost
        ? {
            isLost: true,
            lossReasonId: refs[rand.pick(['preco', 'concorrente', 'sem_orcamento', 'sem_resposta', 'timing'])],
            lossNotes: 'Registrado na revisão semanal do funil.',
          }
        : {}),
    });
    deals.push(deal);
  }
  step(`${deals.length} deals (${deals.filter((d) => d.isWon).length} won, ${deals.filter((d) => d.isLost).length} lost)`);
  return deals;
}

/** Activities of every type, each linked to a contact, its company and one of its deals. */
async function seedActivities({ rand, users, as, step }: Seeding, contacts: SeededContact[], deals: SeededDeal[]): Promise<void> {
  const types = Object.keys(ACTIVITY_TEMPLATES);
  for (let i = 0; i < COUNTS.activities; i++) {
    const deal = deals[i % deals.length];
    const type = types[(i + Math.floor(i / deals.length)) % types.length]; // each deal gets a mix of types
    const past = i % 3 !== 0;
    const when = dayOffset(past ? -rand.int(1, 60) : rand.int(1, 30), rand.int(0, 8) + 9);
    await createActivity(as(users[i % users.length]), {
      type: type as 'task',
      title: rand.pick(ACTIVITY_TEMPLATES[type]),
      description: type === 'note' ? rand.pick(NOTES) : type === 'call' ? 'Conversa de 20 minutos; cliente pediu retorno por e-mail.' : undefined,
      dueDate: type === 'task' || type === 'meeting' ? when : undefined,
      completed: past,
      ...(past ? { completedAt: when } : {}),
      priority: type === 'task' ? rand.pick(['low', 'medium', 'high'] as const) : undefined,
      assignedToId: users[(i + 1) % users.length],
      ownerId: users[i % users.length],
      contactIds: deal.contactId ? [deal.contactId] : [contacts[i % contacts.length].id],
      companyIds: deal.companyId ? [deal.companyId] : [],
      dealIds: [deal.id],
    });
  }
  step(`${COUNTS.activities} activities`);
}

/** Proposals in every status (one per deal), moved through the allowed transitions. */
async function seedProposals({ rand, refs, users, ctx, as, step }: Seeding, contacts: SeededContact[], deals: SeededDeal[]): Promise<void> {
  const flows: string[][] = [[], ['sent'], ['sent', 'accepted'], ['sent', 'declined'], ['sent', 'expired']];
  const open = deals.filter((d) => d.pipelineId === refs.sales && !d.isLost);
  for (let i = 0; i < Math.min(COUNTS.proposals, open.length); i++) {
    const deal = open[i];
    const contact = contacts.find((c) => c.id === deal.contactId);
    const items = rand.sample(PRODUCTS, rand.int(1, 3)).map((p) => ({
      name: p.name,
      unit: p.unit,
      rate: p.rate,
      qty: p.unit === 'projeto' ? 1 : rand.int(2, 40),
      discountPct: rand.pick([0, 0, 5, 10]),
      taxPct: rand.pick([0, 5, 9.25]),
    }));
    const created = await createProposal(as(deal.ownerId ?? users[0]), {
      subject: `Proposta comercial — ${deal.title}`,
      dealId: deal.id,
      contactId: deal.contactId,
      clientId: deal.companyId,
      recipientName: contact ? `${contact.firstName} ${contact.lastName ?? ''}`.trim() : null,
      recipientEmail: contact?.email ?? null,
      items,
      discount: i % 4 === 0 ? 150 : 0,
      adjustment: 0,
      notes: 'Validade de 15 dias. Pagamento em até 30 dias após a emissão da nota fiscal.',
    });
    for (const status of flows[i % flows.length]) await updateProposal(ctx, created.id, { status });
  }
  step(`${Math.min(COUNTS.proposals, open.length)} proposals (draft, sent, accepted, declined, expired)`);
}

/** Static list members. */
async function seedListMembers({ refs, ctx, step }: Seeding, contacts: SeededContact[], companies: SeededCompany[]): Promise<void> {
  await addMembers(ctx, refs.evento, { objectIds: contacts.filter((_, i) => i % 6 === 0).map((c) => c.id) });
  await addMembers(ctx, refs.estrategicos, {
    objectIds: companies
      .filter((c) => c.customer)
      .slice(0, 12)
      .map((c) => c.id),
  });
  step('static list members');
}

/** Form submissions through the public intake service: new leads and returning contacts. */
async function seedSubmissions(
  { rand, ctx, step }: Seeding,
  database: Database,
  tenantId: string,
  contacts: SeededContact[],
  companies: SeededCompany[],
): Promise<void> {
  const form = await findPublicForm(database.db, await tenantSlug(database.db, tenantId), 'fale-conosco');
  for (let i = 0; i < COUNTS.submissions; i++) {
    const returning = i % 3 === 0 ? contacts[i * 5] : undefined;
    const first = returning?.firstName ?? rand.pick(FIRST_NAMES);
    const last = returning?.lastName ?? rand.pick(LAST_NAMES);
    const company = companies[(i * 7) % companies.length];
    await submitForm(
      ctx,
      form,
      {
        email: returning?.email ?? `${asciiSlug(first)}.${asciiSlug(last)}.lead${i}@${company.domain}`,
        nome: first,
        sobrenome: last ?? '',
        ...(returning ? {} : { telefone: `(${company.ddd}) 9${String(7000 + i).padStart(4, '0')}-${String(1000 + i * 37).slice(-4)}` }),
        segmento: rand.pick(['pme', 'medio', 'enterprise']),
        cargo: rand.pick(JOB_TITLES),
        mensagem: rand.pick(['Gostaria de uma demonstração do ERP.', 'Quero saber o preço para 20 usuários.', 'Vocês integram com o meu banco?', '']),
      },
      'json',
      {
        ipAddress: `177.${40 + i}.${10 + i}.${20 + i}`,
        userAgent: 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) Chrome/130.0 Safari/537.36',
        referrer: 'https://www.google.com.br/',
      },
    );
  }
  step(`${COUNTS.submissions} form submissions`);
}
