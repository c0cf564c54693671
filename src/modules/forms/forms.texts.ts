/**
 * The fixed texts of the public form pages in each tenant locale (CONTRACT C.5: the setup file's
 * `tenant.locale`). Only what the page itself says: form names, labels and options come from the setup
 * file, and the per-field validation messages are the API's own (English, shared with JSON clients).
 */
export const LOCALES = ['en', 'pt-BR'] as const;
export type Locale = (typeof LOCALES)[number];
export const DEFAULT_LOCALE: Locale = 'en';

export interface PageTexts {
  submit: string;
  /** Before the red asterisk (the page adds it), and after it. */
  requiredNote: [before: string, after: string];
  choose: string;
  errorSummary: string;
  /** Prefix of the page title when the form comes back with errors. */
  errorTitle: string;
  /** The thank-you page's title; its heading adds `!`. */
  thankYou: string;
  /** Around the form's name. */
  thankYouBody: [before: string, after: string];
  notFoundTitle: string;
  notFoundBody: string;
  tooManyTitle: string;
  tooManyBody: string;
  notSentTitle: string;
  tooLarge: string;
  notProcessed: string;
  failedTitle: string;
  /** Followed by the request id and `)`. */
  failedBody: string;
}

const TEXTS: Record<Locale, PageTexts> = {
  en: {
    submit: 'Submit',
    requiredNote: ['Required fields are marked with an asterisk (', ').'],
    choose: 'Choose…',
    errorSummary: 'Please correct the following',
    errorTitle: 'Error',
    thankYou: 'Thank you',
    thankYouBody: ['Your answers to “', '” were received.'],
    notFoundTitle: 'Form not found',
    notFoundBody: 'There is no form at this address. Check the link you followed.',
    tooManyTitle: 'Too many submissions',
    tooManyBody: 'Please wait a minute and send the form again.',
    notSentTitle: 'The form could not be sent',
    tooLarge: 'The answers are too long (over 1 MiB).',
    notProcessed: 'The request could not be processed.',
    failedTitle: 'Something went wrong',
    failedBody: 'The form could not be sent. Please try again later (reference',
  },
  'pt-BR': {
    submit: 'Enviar',
    requiredNote: ['Os campos obrigatórios estão marcados com um asterisco (', ').'],
    choose: 'Selecione…',
    errorSummary: 'Corrija os itens a seguir',
    errorTitle: 'Erro',
    thankYou: 'Obrigado',
    thankYouBody: ['Suas respostas a “', '” foram recebidas.'],
    notFoundTitle: 'Formulário não encontrado',
    notFoundBody: 'Não há formulário neste endereço. Verifique o link que você seguiu.',
    tooManyTitle: 'Envios demais',
    tooManyBody: 'Aguarde um minuto e envie o formulário novamente.',
    notSentTitle: 'Não foi possível enviar o formulário',
    tooLarge: 'As respostas são longas demais (mais de 1 MiB).',
    notProcessed: 'Não foi possível processar a solicitação.',
    failedTitle: 'Algo deu errado',
    failedBody: 'Não foi possível enviar o formulário. Tente novamente mais tarde (referência',
  },
};

/** The texts of a stored locale; anything unknown (never written by setup) falls back to English. */
export function textsFor(locale: string | undefined): { locale: Locale; t: PageTexts } {
  const l = (LOCALES as readonly string[]).includes(locale ?? '') ? (locale as Locale) : DEFAULT_LOCALE;
  return { locale: l, t: TEXTS[l] };
}
