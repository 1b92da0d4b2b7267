package dev.transferengine.sample.weights;

import dev.transferengine.sample.ConditionalOnRole;
import dev.transferengine.sample.NamedPeers;
import dev.transferengine.sample.Role;

import java.util.List;

import org.springframework.http.HttpStatus;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.RestController;
import reactor.core.publisher.Mono;

/**
 * The trainer's HTTP API: {@code POST /weights/push?inference=NAME,NAME}, names from {@code sample.peers}. A push
 * that a node could not verify (a tensor's checksum differs) answers 502 with the report, which says which.
 */
@RestController
@ConditionalOnRole(Role.TRAINER)
class TrainerController {

    private final TrainerNode trainer;
    private final NamedPeers peers;

    TrainerController(final TrainerNode trainer, final NamedPeers peers) {
        this.trainer = trainer;
        this.peers = peers;
    }

    @PostMapping("/weights/push")
    Mono<ResponseEntity<PushReport>> push(@RequestParam final List<String> inference) {
        return Mono.defer(() -> trainer.push(peers.urls(inference)))
                .map(report -> ResponseEntity.status(report.verified() ? HttpStatus.OK : HttpStatus.BAD_GATEWAY)
                        .body(report));
    }
}
