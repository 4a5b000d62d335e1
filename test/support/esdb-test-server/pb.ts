/**
 * The message and service definitions the server speaks: the very modules `@eventstore/db-client` ships in
 * `generated/` (compiled from EventStoreDB's `streams.proto`, `shared.proto`, `serverfeatures.proto`,
 * `status.proto`), so the server and the client can never disagree on the wire format.
 *
 * They are CommonJS built by protoc; a default import binds `module.exports`, which is how ESM reaches them.
 */

import codePb from '@eventstore/db-client/generated/code_pb.js';
import featuresGrpc from '@eventstore/db-client/generated/serverfeatures_grpc_pb.js';
import featuresPb from '@eventstore/db-client/generated/serverfeatures_pb.js';
import sharedPb from '@eventstore/db-client/generated/shared_pb.js';
import statusPb from '@eventstore/db-client/generated/status_pb.js';
import streamsGrpc from '@eventstore/db-client/generated/streams_grpc_pb.js';
import streamsPb from '@eventstore/db-client/generated/streams_pb.js';
import anyPb from 'google-protobuf/google/protobuf/any_pb.js';
import emptyPb from 'google-protobuf/google/protobuf/empty_pb.js';

export const { StreamsService } = streamsGrpc;
export const { ServerFeaturesService } = featuresGrpc;
export const { ReadReq, ReadResp, AppendReq, AppendResp, BatchAppendReq, BatchAppendResp, DeleteReq, DeleteResp } = streamsPb;
export const { UUID, Empty, StreamIdentifier, AllStreamPosition, WrongExpectedVersion } = sharedPb;
export const { SupportedMethods, SupportedMethod } = featuresPb;
export const { Status } = statusPb;
export const { Code } = codePb;
export const { Any } = anyPb;
export const GoogleEmpty = emptyPb.Empty;

export type ReadReq = InstanceType<typeof ReadReq>;
export type ReadResp = InstanceType<typeof ReadResp>;
export type AppendReq = InstanceType<typeof AppendReq>;
export type AppendResp = InstanceType<typeof AppendResp>;
export type BatchAppendReq = InstanceType<typeof BatchAppendReq>;
export type BatchAppendResp = InstanceType<typeof BatchAppendResp>;
export type DeleteReq = InstanceType<typeof DeleteReq>;
export type DeleteResp = InstanceType<typeof DeleteResp>;
export type UUID = InstanceType<typeof UUID>;
export type Empty = InstanceType<typeof Empty>;
export type SupportedMethods = InstanceType<typeof SupportedMethods>;
export type ReadFilterOptions = InstanceType<typeof ReadReq.Options.FilterOptions>;
