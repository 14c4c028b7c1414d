// The channel between a trusted worker and its candidate process: a UNIX stream socket carrying
// frames (a 32-bit tag drawn per process, a 32-bit length and the payload), the first of which
// may carry one file descriptor (SCM_RIGHTS: the shared arena of a call). Reads are bounded in
// size; a peer that closes the socket, sends a frame over the bound or without the tag (bytes a
// kernel wrote into the socket) is reported, never trusted.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace crucible {

// Sends one frame; `pass_fd` >= 0 travels with it. False when the peer is gone.
bool send_frame(int sock, uint32_t tag, const std::string& payload, int pass_fd = -1);

enum class FrameStatus { Ok, Closed, TooLarge, BadTag, Broken };

// Receives one frame of at most `max_bytes`. A descriptor passed with it is stored in
// *received_fd (else -1; pass nullptr to close any that arrives).
FrameStatus recv_frame(int sock, uint32_t tag, size_t max_bytes, std::string* payload,
                       int* received_fd);

}  // namespace crucible
