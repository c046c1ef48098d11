/** Fixed vocabulary the simulator draws bookings from: places, goods, branches and partners. */
/** A place a party can live, with the address codes the contract's Party object carries. */
export interface Place {
  city: string;
  state: string;
  stateCode: string;
  country: string;
  countryCode: string;
  /** Telephone country calling code, without "+". */
  dial: string;
  streets: readonly string[];
  postalCodes: readonly string[];
}

/** Country name and telephone calling code, by country code. */
const COUNTRIES = {
  NG: { country: "Nigeria", dial: "234" },
  GB: { country: "United Kingdom", dial: "44" },
  US: { country: "United States", dial: "1" },
  CA: { country: "Canada", dial: "1" },
  AE: { country: "United Arab Emirates", dial: "971" },
  GH: { country: "Ghana", dial: "233" },
};

type Row = [keyof typeof COUNTRIES, string, string, string, string, string];

/** Places from rows of "country code | city | state | state code | streets | postal codes", lists split by ", ". */
function places(rows: string): Place[] {
  return rows
    .trim()
    .split("\n")
    .map((row) => {
      const [countryCode, city, state, stateCode, streets, postalCodes] = row.split(" | ") as Row;
      return {
        ...COUNTRIES[countryCode],
        countryCode,
        city,
        state,
        stateCode,
        streets: streets.split(", "),
        postalCodes: postalCodes.split(", "),
      };
    });
}

/** Nigerian cities: every sender, and the receivers of local (LC) bookings. Lagos first: it sends the most. */
export const NIGERIAN_PLACES: readonly Place[] = places(`
NG | Lagos | Lagos | LA | Adeola Odeku Street, Allen Avenue, Awolowo Road, Admiralty Way, Herbert Macaulay Way | 100001, 101241, 101233, 105102
NG | Abuja | Federal Capital Territory | FC | Ahmadu Bello Way, Aminu Kano Crescent, Adetokunbo Ademola Crescent, Gimbiya Street | 900211, 900288, 900108
NG | Kano | Kano | KN | Murtala Mohammed Way, Zoo Road, Bompai Road, France Road | 700001, 700213, 700241
NG | Ibadan | Oyo | OY | Ring Road, Bodija Market Road, Iwo Road, Oluyole Way | 200001, 200284, 200132
NG | Port Harcourt | Rivers | RI | Trans-Amadi Road, Aba Road, Olu Obasanjo Road, Peter Odili Road | 500001, 500102, 500272
NG | Enugu | Enugu | EN | Ogui Road, Zik Avenue, Agbani Road, Chime Avenue | 400001, 400102, 400241
NG | Kaduna | Kaduna | KD | Ahmadu Bello Way, Constitution Road, Ali Akilu Road, Independence Way | 800001, 800283, 800212
NG | Benin City | Edo | ED | Sapele Road, Airport Road, Akpakpava Road, Ugbowo-Lagos Road | 300001, 300102, 300271
NG | Abeokuta | Ogun | OG | Oke-Ilewo Road, Kuto Road, Panseke Road | 110001, 110124
NG | Owerri | Imo | IM | Wetheral Road, Douglas Road, Okigwe Road | 460001, 460242
`);

/** Destinations of international (IN) bookings. */
export const INTERNATIONAL_PLACES: readonly Place[] = places(`
GB | London | England | ENG | Rye Lane, Old Kent Road, Peckham High Street, Walworth Road | SE15 4ST, SE1 5HG, SE17 1RW, E15 4BQ
US | Houston | Texas | TX | Bissonnet Street, Bellaire Boulevard, Westheimer Road, Wilcrest Drive | 77072, 77036, 77099, 77083
CA | Toronto | Ontario | ON | Finch Avenue West, Jane Street, Weston Road, Kipling Avenue | M9V 3Y6, M3N 1W9, M9M 2G4
AE | Dubai | Dubai | DU | Sheikh Zayed Road, Al Rigga Road, Al Muraqqabat Street | 00000
GH | Accra | Greater Accra | AA | Oxford Street, Liberation Road, Ring Road Central, Spintex Road | GA-123-4567, GA-184-1120, GL-055-9321
GB | Manchester | England | ENG | Oxford Road, Stockport Road, Cheetham Hill Road | M13 9PL, M12 6HS, M8 8EP
US | Atlanta | Georgia | GA | Peachtree Street, Candler Road, Memorial Drive | 30303, 30032, 30317
`);

export const FIRST_NAMES: readonly string[] = (
  "Chinedu Adaeze Oluwaseun Emeka Ngozi Aisha Ibrahim Funmilayo Tunde Bukola Yusuf Zainab " +
  "Obinna Kelechi Temitope Segun Halima Uchenna Amaka Musa Ifeoma Babajide Hauwa Chiamaka " +
  "Olumide Nkechi Abdullahi Folake Ebuka Efosa"
).split(" ");

export const LAST_NAMES: readonly string[] = (
  "Okafor Adeyemi Bello Eze Okonkwo Abubakar Olawale Nwosu Ibrahim Balogun Mohammed Chukwu " +
  "Adebayo Danjuma Okoro Lawal Osagie Ogunleye Umar Obi"
).split(" ");

export const EMAIL_DOMAINS = ["gmail.com", "yahoo.com", "outlook.com", "hotmail.com"] as const;

/** Nigerian mobile prefixes after the country code (MTN, Glo, Airtel, 9mobile). */
export const NG_MOBILE_PREFIXES: readonly string[] = "803 806 813 816 805 807 802 808 809 703 906".split(" ");

export const LANDMARKS = [
  "Opposite First Bank",
  "Near Shoprite",
  "Beside GTBank",
  "Behind the filling station",
  "Close to the central mosque",
  "Opposite the church",
  "",
] as const;

/** Goods with an HS code and a unit price range in NGN. */
export const GOODS: ReadonlyArray<{ name: string; hsCode: string; min: number; max: number }> = [
  { name: "Ankara fabric", hsCode: "5208.52", min: 8_000, max: 45_000 },
  { name: "Shea butter", hsCode: "1515.90", min: 3_000, max: 15_000 },
  { name: "Garri (5kg)", hsCode: "1106.20", min: 4_000, max: 9_000 },
  { name: "Palm oil (4L)", hsCode: "1511.10", min: 6_000, max: 14_000 },
  { name: "Dried fish", hsCode: "0305.59", min: 5_000, max: 30_000 },
  { name: "Suya spice", hsCode: "0910.99", min: 1_500, max: 6_000 },
  { name: "Aso-oke", hsCode: "5407.61", min: 25_000, max: 120_000 },
  { name: "Beaded jewellery", hsCode: "7117.90", min: 10_000, max: 60_000 },
  { name: "Laptop", hsCode: "8471.30", min: 250_000, max: 900_000 },
  { name: "Phone accessories", hsCode: "8517.70", min: 5_000, max: 40_000 },
  { name: "Documents", hsCode: "4907.00", min: 500, max: 2_000 },
  { name: "Books", hsCode: "4901.99", min: 3_000, max: 20_000 },
  { name: "Egusi", hsCode: "1207.70", min: 3_500, max: 12_000 },
  { name: "Plantain chips", hsCode: "2008.99", min: 1_000, max: 5_000 },
  { name: "Leather sandals", hsCode: "6403.99", min: 12_000, max: 55_000 },
];

export const BRANCHES = [
  { name: "Ikeja Branch", location: "Lagos" },
  { name: "Victoria Island Branch", location: "Lagos" },
  { name: "Lekki Branch", location: "Lagos" },
  { name: "Wuse II Branch", location: "Abuja" },
  { name: "Kano Central Branch", location: "Kano" },
  { name: "Bodija Branch", location: "Ibadan" },
  { name: "GRA Branch", location: "Port Harcourt" },
  { name: "Independence Layout Branch", location: "Enugu" },
] as const;

export const PARTNER_ORGS = [
  "Sendbox Logistics",
  "Naija Express Partners",
  "Eko Shop Hub",
  "Arewa Traders",
] as const;

export const SHIPMENT_RATES = ["STANDARD", "EXPRESS", "ECONOMY"] as const;
export const PAYMENT_METHODS = ["card", "bank_transfer", "wallet", "ussd"] as const;
export const PICKUP_WINDOWS = [
  { from: "9:00 AM", to: "12:00 PM" },
  { from: "12:00 PM", to: "3:00 PM" },
  { from: "3:00 PM", to: "6:00 PM" },
] as const;

/** A booking's `type`: international or local. */
export type SimBookingType = "IN" | "LC";

/** Carriers and the rate label (`courier.token`) they quote, per booking type. */
export const CARRIERS = {
  IN: [
    { carrier: "DHL", label: "DHL Express Worldwide", serviceType: "AIR_EXPORT" },
    { carrier: "UPS", label: "UPS Worldwide Saver", serviceType: "AIR_EXPORT" },
    { carrier: "FEDEX", label: "FedEx International Priority", serviceType: "AIR_EXPORT" },
  ],
  LC: [
    { carrier: "GIGL", label: "GIG Logistics Standard", serviceType: "LOCAL_DELIVERY" },
    { carrier: "REDSTAR", label: "Red Star Express Next Day", serviceType: "LOCAL_DELIVERY" },
    { carrier: "KWIK", label: "Kwik Same Day", serviceType: "SAME_DAY" },
  ],
} satisfies Record<SimBookingType, unknown>;
