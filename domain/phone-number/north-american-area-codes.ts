/**
 * Geographic area codes of the North American Numbering Plan in service in the United States (the 50 states
 * and DC) and Canada, by state or province. Numbers can be provisioned only in these (docs/limits.md#phone-numbers: US and Canada
 * only). Territories (Puerto Rico, Guam, …), non-geographic and toll-free codes are not offered for
 * provisioning; toll-free and premium codes are listed separately because lookups recognise them.
 * Overlays introduced very recently may be missing: they are refused as unknown until added here.
 */
export type NanpCountry = 'US' | 'CA';
export const NANP_COUNTRIES: readonly NanpCountry[] = ['US', 'CA'];

const US: Readonly<Record<string, string>> = {
  AL: '205 251 256 334 659 938',
  AK: '907',
  AZ: '480 520 602 623 928',
  AR: '327 479 501 870',
  CA: '209 213 279 310 323 341 350 408 415 424 442 510 530 559 562 619 626 628 650 657 661 669 707 714 747 760 805 818 820 831 840 858 909 916 925 949 951',
  CO: '303 719 720 970',
  CT: '203 475 860 959',
  DE: '302',
  DC: '202 771',
  FL: '239 305 321 352 386 407 448 561 656 689 727 754 772 786 813 850 863 904 941 954',
  GA: '229 404 470 478 678 706 762 770 912',
  HI: '808',
  ID: '208 986',
  IL: '217 224 309 312 331 447 464 618 630 708 773 779 815 847 872',
  IN: '219 260 317 463 574 765 812 930',
  IA: '319 515 563 641 712',
  KS: '316 620 785 913',
  KY: '270 364 502 606 859',
  LA: '225 318 337 504 985',
  ME: '207',
  MD: '227 240 301 410 443 667',
  MA: '339 351 413 508 617 774 781 857 978',
  MI: '231 248 269 313 517 586 616 679 734 810 906 947 989',
  MN: '218 320 507 612 651 763 952',
  MS: '228 601 662 769',
  MO: '314 417 557 573 636 660 816',
  MT: '406',
  NE: '308 402 531',
  NV: '702 725 775',
  NH: '603',
  NJ: '201 551 609 640 732 848 856 862 908 973',
  NM: '505 575',
  NY: '212 315 332 347 516 518 585 607 631 646 680 716 718 838 845 914 917 929 934',
  NC: '252 336 704 743 828 910 919 980 984',
  ND: '701',
  OH: '216 220 234 326 330 380 419 440 513 567 614 740 937',
  OK: '405 539 572 580 918',
  OR: '458 503 541 971',
  PA: '215 223 267 272 412 445 484 570 610 717 724 814 878',
  RI: '401',
  SC: '803 839 843 854 864',
  SD: '605',
  TN: '423 615 629 731 865 901 931',
  TX: '210 214 254 281 325 346 361 409 430 432 469 512 682 713 726 737 806 817 830 832 903 915 936 940 945 956 972 979',
  UT: '385 435 801',
  VT: '802',
  VA: '276 434 540 571 703 757 804',
  WA: '206 253 360 425 509 564',
  WV: '304 681',
  WI: '262 414 534 608 715 920',
  WY: '307',
};

const CA: Readonly<Record<string, string>> = {
  AB: '403 587 780 825',
  BC: '236 250 604 672 778',
  MB: '204 431',
  NB: '428 506',
  NL: '709 879',
  NS: '782 902',
  PE: '782 902',
  ON: '226 249 289 343 365 416 437 519 548 613 647 683 705 807 905',
  QC: '263 354 367 418 438 450 468 514 579 581 819 873',
  SK: '306 639',
  YT: '867',
  NT: '867',
  NU: '867',
};

export type AreaCodeInfo = Readonly<{ areaCode: string; country: NanpCountry; regions: readonly string[] }>;

const build = (): ReadonlyMap<string, AreaCodeInfo> => {
  const m = new Map<string, { areaCode: string; country: NanpCountry; regions: string[] }>();
  for (const [country, table] of [
    ['US', US],
    ['CA', CA],
  ] as const) {
    for (const [region, codes] of Object.entries(table)) {
      for (const code of codes.split(' ')) {
        const known = m.get(code);
        if (known) known.regions.push(region);
        else m.set(code, { areaCode: code, country, regions: [region] });
      }
    }
  }
  return new Map([...m.entries()].sort(([a], [b]) => a.localeCompare(b)));
};

/** Every geographic area code of the US and Canada, in ascending order. */
export const AREA_CODES: ReadonlyMap<string, AreaCodeInfo> = build();

export const areaCodesOf = (country: NanpCountry): readonly string[] =>
  [...AREA_CODES.values()].filter((a) => a.country === country).map((a) => a.areaCode);

/** NANP toll-free codes (800, 833, …) and the premium-rate 900: valid numbers, never provisioned here. */
export const TOLL_FREE_CODES: ReadonlySet<string> = new Set(['800', '833', '844', '855', '866', '877', '888']);
export const PREMIUM_CODES: ReadonlySet<string> = new Set(['900']);

/** Why an area code cannot be provisioned in a country, or null when it can. */
export function areaCodeProblem(country: string, areaCode: string): string | null {
  if (!/^\d{3}$/.test(areaCode)) return 'must be three digits';
  const info = AREA_CODES.get(areaCode);
  if (TOLL_FREE_CODES.has(areaCode) || PREMIUM_CODES.has(areaCode)) return `${areaCode} is not a geographic area code`;
  if (!info) return `${areaCode} is not an area code of the US or Canada`;
  if (info.country !== country) return `${areaCode} is an area code of ${info.country}, not ${country}`;
  return null;
}
