/**
 * Active ISO 4217 alphabetic codes (List One: currencies, funds, precious
 * metals, XDR/XSU/XUA), embedded rather than read from
 * `Intl.supportedValuesOf('currency')` because ICU's list (a) still carries
 * withdrawn codes such as HRK, CUC, ZWL and SLL and (b) changes with the Node
 * version, which would make validation drift between deployments.
 * Left out on purpose: XTS (testing) and XXX (no currency), which cannot price a deal.
 * Kept during their withdrawal period: BGN (euro since 2026) and ANG (→ XCG),
 * so older records stay writable. The unit test cross-checks this list against ICU.
 */
export const ISO_4217_CODES: ReadonlySet<string> = new Set(
  (
    'AED AFN ALL AMD ANG AOA ARS AUD AWG AZN BAM BBD BDT BGN BHD BIF BMD BND BOB BOV BRL BSD BTN BWP BYN BZD ' +
    'CAD CDF CHE CHF CHW CLF CLP CNY COP COU CRC CUP CVE CZK DJF DKK DOP DZD EGP ERN ETB EUR FJD FKP GBP GEL ' +
    'GHS GIP GMD GNF GTQ GYD HKD HNL HTG HUF IDR ILS INR IQD IRR ISK JMD JOD JPY KES KGS KHR KMF KPW KRW KWD ' +
    'KYD KZT LAK LBP LKR LRD LSL LYD MAD MDL MGA MKD MMK MNT MOP MRU MUR MVR MWK MXN MXV MYR MZN NAD NGN NIO ' +
    'NOK NPR NZD OMR PAB PEN PGK PHP PKR PLN PYG QAR RON RSD RUB RWF SAR SBD SCR SDG SEK SGD SHP SLE SOS SRD ' +
    'SSP STN SVC SYP SZL THB TJS TMT TND TOP TRY TTD TWD TZS UAH UGX USD USN UYI UYU UYW UZS VED VES VND VUV ' +
    'WST XAF XAG XAU XBA XBB XBC XBD XCD XCG XDR XOF XPD XPF XPT XSU XUA YER ZAR ZMW ZWG'
  ).split(' '),
);
