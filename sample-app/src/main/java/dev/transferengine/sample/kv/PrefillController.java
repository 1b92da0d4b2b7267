package dev.transferengine.sample.kv;

import dev.transferengine.sample.ConditionalOnRole;
import dev.transferengine.sample.NamedPeers;
import dev.transferengine.sample.Role;

import org.springframework.http.HttpStatus;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.RestController;
import reactor.core.publisher.Mono;

/**
 * Prefill's HTTP API: {@code POST /kv/transfer?tokens=N&decode=NAME}, NAME one of {@code sample.peers}. A transfer
 * that decode could not verify (a layer's checksum differs) answers 502 with the report, which says which layers.
 */
@RestController
@ConditionalOnRole({Role.PREFILL, Role.DEMO})
class PrefillController {

    private final PrefillNode prefill;
    private final NamedPeers peers;

    PrefillController(final PrefillNode prefill, final NamedPeers peers) {
        this.prefill = prefill;
        this.peers = peers;
    }

    @PostMapping("/kv/transfer")
    Mono<ResponseEntity<KvTransferReport>> transfer(@RequestParam final int tokens, @RequestParam final String decode) {
        return Mono.defer(() -> prefill.transfer(tokens, peers.url(decode)))
                .map(report -> ResponseEntity.status(report.verified() ? HttpStatus.OK : HttpStatus.BAD_GATEWAY)
                        .body(report));
    }
}
