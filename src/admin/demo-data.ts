import { cnpjCheckDigits } from '../domain/cnpj.js';
// Realistic Brazilian B2B sample values for the demo tenant and the benchmarks: deterministic (seeded),
// valid by the domain rules (CNPJ check digits, E.164 phones, host names).

/** A small seeded PRNG (mulberry32): the same seed gives the same data set. */
export class Rand {
  private s: number;
  constructor(seed = 42) {
    this.s = seed >>> 0;
  }
  next(): number {
    let t = (this.s = (this.s + 0x6d2b79f5) >>> 0);
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }
  int(min: number, max: number): number {
    return min + Math.floor(this.next() * (max - min + 1));
  }
  pick<T>(xs: readonly T[]): T {
    return xs[Math.floor(this.next() * xs.length)];
  }
  chance(p: number): boolean {
    return this.next() < p;
  }
  /** k distinct elements. */
  sample<T>(xs: readonly T[], k: number): T[] {
    const copy = [...xs];
    const out: T[] = [];
    while (out.length < k && copy.length) out.push(copy.splice(Math.floor(this.next() * copy.length), 1)[0]);
    return out;
  }
}

export const FIRST_NAMES = [
  'Ana',
  'Beatriz',
  'Camila',
  'Daniela',
  'Eduarda',
  'Fernanda',
  'Gabriela',
  'Helena',
  'Isabela',
  'Juliana',
  'Larissa',
  'Mariana',
  'Natália',
  'Patrícia',
  'Rafaela',
  'Sofia',
  'Tatiana',
  'Vitória',
  'Aline',
  'Bruna',
  'Carolina',
  'Letícia',
  'Luana',
  'Renata',
  'André',
  'Bruno',
  'Carlos',
  'Diego',
  'Eduardo',
  'Felipe',
  'Gustavo',
  'Henrique',
  'Igor',
  'João',
  'Lucas',
  'Marcelo',
  'Nicolas',
  'Otávio',
  'Paulo',
  'Rafael',
  'Rodrigo',
  'Thiago',
  'Vinícius',
  'Wagner',
  'Caio',
  'Fábio',
  'Leonardo',
  'Matheus',
] as const;

export const LAST_NAMES = [
  'Silva',
  'Santos',
  'Oliveira',
  'Souza',
  'Rodrigues',
  'Ferreira',
  'Alves',
  'Pereira',
  'Lima',
  'Gomes',
  'Costa',
  'Ribeiro',
  'Martins',
  'Carvalho',
  'Almeida',
  'Lopes',
  'Soares',
  'Fernandes',
  'Vieira',
  'Barbosa',
  'Rocha',
  'Dias',
  'Nascimento',
  'Andrade',
  'Moreira',
  'Nunes',
  'Marques',
  'Machado',
  'Mendes',
  'Freitas',
  'Cardoso',
  'Ramos',
  'Gonçalves',
  'Santana',
  'Teixeira',
  'Araújo',
] as const;

const COMPANY_HEADS = [
  'Aurora',
  'Bandeirante',
  'Cerrado',
  'Guanabara',
  'Ipê',
  'Jequitibá',
  'Litoral',
  'Mantiqueira',
  'Paraná',
  'Pampa',
  'Pantanal',
  'Sertão',
  'Tietê',
  'Capibaribe',
  'Atlântica',
  'Borborema',
  'Serra Azul',
  'Vale Verde',
  'Horizonte',
  'Planalto',
  'Itaipu',
  'Araucária',
  'Caatinga',
  'Iguaçu',
  'Tapajós',
  'Xingu',
  'Juruá',
  'Paraty',
  'Ouro Preto',
  'Corcovado',
] as const;
const COMPANY_KINDS = [
  'Tecnologia',
  'Logística',
  'Alimentos',
  'Engenharia',
  'Saúde',
  'Educação',
  'Varejo',
  'Agro',
  'Energia',
  'Consultoria',
  'Têxtil',
  'Metalúrgica',
] as const;
const COMPANY_SUFFIXES = ['Ltda', 'S.A.', 'Ltda', 'ME', 'Ltda', 'EIRELI'] as const;

export const INDUSTRIES: Record<(typeof COMPANY_KINDS)[number], string> = {
  Tecnologia: 'Software',
  Logística: 'Logistics',
  Alimentos: 'Food & Beverage',
  Engenharia: 'Construction',
  Saúde: 'Healthcare',
  Educação: 'Education',
  Varejo: 'Retail',
  Agro: 'Agribusiness',
  Energia: 'Energy',
  Consultoria: 'Professional Services',
  Têxtil: 'Textiles',
  Metalúrgica: 'Manufacturing',
};

/** Area codes (DDD) of large Brazilian cities. */
export const CITIES = [
  { city: 'São Paulo', uf: 'SP', ddd: 11 },
  { city: 'Campinas', uf: 'SP', ddd: 19 },
  { city: 'Rio de Janeiro', uf: 'RJ', ddd: 21 },
  { city: 'Belo Horizonte', uf: 'MG', ddd: 31 },
  { city: 'Curitiba', uf: 'PR', ddd: 41 },
  { city: 'Porto Alegre', uf: 'RS', ddd: 51 },
  { city: 'Florianópolis', uf: 'SC', ddd: 48 },
  { city: 'Salvador', uf: 'BA', ddd: 71 },
  { city: 'Recife', uf: 'PE', ddd: 81 },
  { city: 'Fortaleza', uf: 'CE', ddd: 85 },
  { city: 'Brasília', uf: 'DF', ddd: 61 },
  { city: 'Goiânia', uf: 'GO', ddd: 62 },
  { city: 'Manaus', uf: 'AM', ddd: 92 },
  { city: 'Belém', uf: 'PA', ddd: 91 },
] as const;

/** A valid numeric CNPJ for the n-th company (distinct for distinct n), formatted `12.345.678/0001-95`. */
export function cnpjFor(n: number): string {
  // n → n·7919 mod M is a bijection (7919 is prime and does not divide M), so roots never repeat.
  const root = String(10_000_000 + ((n * 7_919) % 89_999_990));
  const base = `${root}0001`;
  const s = base + cnpjCheckDigits(base);
  return `${s.slice(0, 2)}.${s.slice(2, 5)}.${s.slice(5, 8)}/${s.slice(8, 12)}-${s.slice(12)}`;
}

/** A Brazilian mobile number in E.164 for the n-th person of an area code: +55 DD 9XXXX-XXXX. */
export function mobileFor(n: number, ddd: number): string {
  return `+55${ddd}9${String(80_000_000 + (n % 20_000_000)).padStart(8, '0')}`;
}

/** A landline in E.164: +55 DD 3XXX-XXXX. */
export function landlineFor(n: number, ddd: number): string {
  return `+55${ddd}3${String(1_000_000 + (n % 8_999_999)).padStart(7, '0')}`;
}

export function asciiSlug(s: string): string {
  return s
    .normalize('NFD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '')
    .slice(0, 30);
}

export interface SampleCompany {
  name: string;
  domain: string;
  cnpj: string;
  industry: string;
  city: (typeof CITIES)[number];
}

/** n distinct companies (names and domains unique). */
export function sampleCompanies(rand: Rand, n: number): SampleCompany[] {
  const out: SampleCompany[] = [];
  const seen = new Set<string>();
  for (let i = 0; out.length < n; i++) {
    const head = rand.pick(COMPANY_HEADS);
    const kind = rand.pick(COMPANY_KINDS);
    let base = `${head} ${kind}`;
    if (seen.has(base)) base = `${base} ${i}`;
    seen.add(base);
    out.push({
      name: `${base} ${rand.pick(COMPANY_SUFFIXES)}`,
      domain: `${asciiSlug(base)}.com.br`,
      cnpj: cnpjFor(out.length + 1),
      industry: INDUSTRIES[kind],
      city: rand.pick(CITIES),
    });
  }
  return out;
}

export const FREE_MAIL = ['gmail.com', 'outlook.com', 'hotmail.com', 'yahoo.com.br', 'uol.com.br', 'terra.com.br'] as const;
export const JOB_TITLES = [
  'CEO',
  'CTO',
  'CFO',
  'Diretor Comercial',
  'Gerente de Compras',
  'Coordenadora de TI',
  'Analista de Marketing',
  'Head de Operações',
  'Gerente Financeiro',
  'Supervisora de Vendas',
] as const;
