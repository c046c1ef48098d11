/** The bundled partner API simulator: start it with `startSimulator`, generate bookings with `fullBooking`. */
export {
  type BookingTimes,
  bookingTypeOf,
  DEFAULT_EPOCH_MS,
  fullBooking,
  type SimFullBooking,
  type SimSummaryBooking,
  SOURCE_PLATFORMS,
  type SourcePlatform,
  searchIdOf,
  sourcePlatformOf,
  summaryOf,
} from "./bookings.js";
export type { SimBookingType } from "./catalog.js";
export { type BookingFilter, Dataset, type DatasetOptions, type FeedSlice } from "./dataset.js";
export { type Endpoint, type Fault, type FaultKind, type InjectOptions, TRANSIENT_FAULTS } from "./faults.js";
export { DEFAULT_PAGE, MAX_PAGE } from "./params.js";
export { VAT_RATE } from "./pricing.js";
export { PROXY_502_HTML } from "./responses.js";
export {
  API_BASE,
  type Behaviour,
  type RequestEvent,
  type Simulator,
  type SimulatorOptions,
  type SimulatorStats,
  startSimulator,
} from "./server.js";
