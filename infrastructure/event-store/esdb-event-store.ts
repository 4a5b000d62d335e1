export { EsdbEventStore } from './esdb/esdb-event-store.js';
